export function fetchServedDocument(options: {
  cleanups: (() => Promise<unknown>)[];
  name?: string;
}): Promise<string>;
