// How many times the event loop turned while some work ran: a test of work done in slices
// checks that it yielded, without timing it.

export async function turnsDuring<T>(work: () => Promise<T>): Promise<{ result: T; turns: number }> {
  let running = true;
  let turns = 0;
  const turn = () => {
    if (!running) return;
    turns++;
    setImmediate(turn);
  };
  setImmediate(turn);
  try {
    return { result: await work(), turns };
  } finally {
    running = false;
  }
}
