export function freePorts(count: number): Promise<number[]>;
export function freePort(): Promise<number>;
export function refusesConnections(port: number | string): Promise<boolean>;
