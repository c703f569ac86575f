import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { expressRouterProblems } from './express-router.js';
import { nestGrpcProblems } from './nest-grpc.js';
import { pgClientProblems } from './pg-client.js';
import { typeormDriverProblems } from './typeorm-driver.js';

/** Every internal the service borrows from pg, TypeORM, Express and Nest, checked on a running app. */
export function internalsProblems(dataSource: DataSource, expressApp: unknown): string[] {
  return [
    ...pgClientProblems(),
    ...typeormDriverProblems(dataSource),
    ...expressRouterProblems(expressApp),
    ...nestGrpcProblems(),
  ];
}

/**
 * Fails the boot, naming what changed, when an upgrade of pg, TypeORM, Express or Nest no longer
 * offers an internal the service relies on (this folder): better a process that refuses to start
 * than one that silently stops bounding statements or guarding commits.
 */
@Injectable()
export class InternalsSelfCheck implements OnApplicationBootstrap {
  constructor(
    @InjectDataSource() private readonly dataSource: DataSource,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  onApplicationBootstrap(): void {
    const problems = internalsProblems(
      this.dataSource,
      this.adapterHost.httpAdapter?.getInstance(),
    );
    if (problems.length > 0) {
      throw new Error(
        `a library no longer offers what src/internals/ relies on: ${problems.join('; ')}`,
      );
    }
  }
}
