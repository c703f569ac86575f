export interface Etcd {
  /** http://127.0.0.1:PORT (client URL) */
  url: string;
  port: number;
  pid: number | undefined;
  output(): string;
  stop(): Promise<void>;
}

export function etcdPath(): string | undefined;
export function startEtcd(options?: { name?: string }): Promise<Etcd>;
