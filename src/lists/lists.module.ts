import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { ListCount } from './list-count.entity.js';
import { ListCounts } from './list-counts.js';

/** The lists' totals (list_counts); the rest of lists/ is plain code the features import. */
@Module({
  imports: [TypeOrmModule.forFeature([ListCount])],
  providers: [ListCounts],
  exports: [ListCounts],
})
export class ListsModule {}
