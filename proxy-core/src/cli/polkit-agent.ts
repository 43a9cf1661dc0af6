/** polkit's text agent for a CLI in a terminal (placeholder until the OS piece lands: none is started). */
export async function startTextAgent(): Promise<{ stop(): void } | null> {
  return null;
}
