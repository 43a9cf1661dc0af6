/** Counts the event loop's turns from now until `stop()`: work split across turns lets a counter like this run in between. */
export function countTurns(): { stop(): number } {
  let turns = 0;
  let counting = true;
  const count = (): void => {
    if (!counting) return;
    turns++;
    setImmediate(count);
  };
  setImmediate(count);
  return {
    stop: () => {
      counting = false;
      return turns;
    },
  };
}
