import type * as grpc from '@grpc/grpc-js';

export const USERS_PROTO_PATH: string;
export const LOADER_OPTIONS: {
  keepCase: boolean;
  longs: NumberConstructor;
  enums: StringConstructor;
  defaults: boolean;
  oneofs: boolean;
};

export interface User {
  id: number;
  name: string;
}

/** The users.Users stub (loaded at runtime from the proto, so typed here by hand). */
export interface UsersClient extends grpc.Client {
  GetUser(
    request: { id: number },
    metadata: grpc.Metadata,
    options: grpc.CallOptions,
    callback: (error: grpc.ServiceError | null, reply?: User) => void,
  ): grpc.ClientUnaryCall;
  GetUser(
    request: { id: number },
    callback: (error: grpc.ServiceError | null, reply?: User) => void,
  ): grpc.ClientUnaryCall;
}

export interface HealthClient extends grpc.Client {
  Check(
    request: { service: string },
    options: grpc.CallOptions,
    callback: (error: grpc.ServiceError | null, reply?: { status: string }) => void,
  ): grpc.ClientUnaryCall;
}

export interface GrpcClients {
  users: UsersClient;
  health: HealthClient;
  close(): void;
}

export interface CallResult<T> {
  code: grpc.status;
  reply?: T;
  details?: string;
}

export interface CallOptions {
  deadlineMs?: number;
  metadata?: grpc.Metadata;
}

export function usersClient(address: string): UsersClient;
export function grpcClients(address: string): GrpcClients;
export function getUser(
  client: UsersClient,
  id: number,
  options?: CallOptions,
): Promise<CallResult<User>>;
export function healthCheck(
  health: HealthClient,
  service?: string,
  options?: { deadlineMs?: number },
): Promise<string>;
export function rawClient(address: string): grpc.Client;
export function getUserRaw(
  clientOrAddress: grpc.Client | string,
  message: Buffer,
  options?: CallOptions,
): Promise<CallResult<Buffer>>;
