export const LEAK_PATTERNS: readonly RegExp[];
export function findLeak(text: string, sent?: string): RegExp | undefined;
