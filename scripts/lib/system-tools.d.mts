export function findTool(name: string): string | undefined;
export function findPostgresBin(tool?: string): string | undefined;
