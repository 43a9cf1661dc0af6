// The order statistics the bench reports: a quantile by rank (the sample at ⌊q·n⌋, the last for q = 1), and the
// median. Undefined for no samples.
export const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
export const median = (xs) => quantile(xs, 0.5);
