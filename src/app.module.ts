import { Module } from '@nestjs/common';
import { APP_FILTER, APP_PIPE } from '@nestjs/core';
import { ServeStaticModule } from '@nestjs/serve-static';
import path from 'node:path';
import { AuthModule } from './auth/auth.module.js';
import { ChangesModule } from './changes/changes.module.js';
import { AppValidationPipe } from './http/app-validation.pipe.js';
import { AppConfigModule } from './config/app-config.module.js';
import { DatabaseModule } from './database/database.module.js';
import { GrpcModule } from './grpc/grpc.module.js';
import { InternalsSelfCheck } from './internals/self-check.js';
import { ObservabilityModule } from './observability/observability.module.js';
import { OverloadModule } from './overload/overload.module.js';
import { PostsModule } from './posts/posts.module.js';
import { projectRoot } from './project-root.js';
import { ScimExceptionFilter } from './scim/scim-exception.filter.js';
import { ScimModule } from './scim/scim.module.js';
import { UsersModule } from './users/users.module.js';
import { UtilityModule } from './utility/utility.module.js';

@Module({
  imports: [
    AppConfigModule,
    AuthModule,
    DatabaseModule,
    GrpcModule,
    ObservabilityModule,
    OverloadModule,
    ServeStaticModule.forRoot({
      rootPath: path.join(projectRoot(), 'public'),
      // No SPA fallback: the module would otherwise answer every unmatched GET with
      // index.html. A regex that matches no path disables it, so unknown paths reach the
      // exception filter's JSON 404.
      renderPath: /(?!)/,
      serveStaticOptions: {
        index: false,
        redirect: false,
        dotfiles: 'ignore',
        fallthrough: true,
        etag: true,
        maxAge: '1h',
      },
    }),
    // Before UsersModule: Express matches routes in the order they are registered, and
    // `GET /users/changes` must be matched before `GET /users/:id` takes it for an id.
    ChangesModule,
    UsersModule,
    PostsModule,
    ScimModule,
    UtilityModule,
  ],
  providers: [
    { provide: APP_PIPE, useClass: AppValidationPipe },
    // AllExceptionsFilter, answering in SCIM's error schema under /scim/v2.
    { provide: APP_FILTER, useClass: ScimExceptionFilter },
    InternalsSelfCheck,
  ],
})
export class AppModule {}
