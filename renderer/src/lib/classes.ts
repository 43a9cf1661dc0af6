/** A tool's class in plain words, and how loudly the UI shows it. */

export type Tone = 'calm' | 'caution' | 'danger';

export interface ClassInfo {
  label: string;
  /** One plain sentence: what this class means for the person deciding. */
  meaning: string;
  tone: Tone;
}

const CLASSES: Readonly<Record<string, ClassInfo>> = {
  'read-only-trusted': { label: 'Read-only (trusted)', meaning: 'Only reads, and you trust this server’s read-only claims.', tone: 'calm' },
  'read-only-unchecked': { label: 'Read-only (unchecked)', meaning: 'Says it only reads; Airlock cannot check that.', tone: 'caution' },
  mutating: { label: 'Changes things', meaning: 'Changes something, and says it does not destroy anything.', tone: 'caution' },
  destructive: { label: 'Destructive', meaning: 'May delete or overwrite things.', tone: 'danger' },
  unclassifiable: { label: 'Unclassifiable', meaning: 'Airlock could not tell what this tool does: treat it as dangerous.', tone: 'danger' },
};

/** Any class name, known or not (an unknown one is shown as it is, loudly). */
export function classInfo(cls: string): ClassInfo {
  return CLASSES[cls] ?? { label: cls, meaning: 'A class this window does not know.', tone: 'danger' };
}

export const KNOWN_CLASSES: readonly string[] = Object.keys(CLASSES);
