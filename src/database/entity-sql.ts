import type { EntityMetadata, ObjectLiteral, Repository } from 'typeorm';

/**
 * SQL fragments of one entity's table, generated once at startup from its TypeORM metadata, for
 * the hot read paths that skip the query builder. The entity stays the only description of the
 * table: a column added to it appears here without another edit.
 */
export class EntitySql<E extends ObjectLiteral> {
  /** The quoted table name. */
  readonly table: string;
  /** Every column, aliased to its property: rows come back shaped like the entity. */
  readonly selectList: string;
  private readonly metadata: EntityMetadata;

  constructor(repository: Repository<E>) {
    this.metadata = repository.metadata;
    this.table = quote(this.metadata.tableName);
    this.selectList = this.select(this.metadata.columns.map((column) => column.propertyName));
  }

  /** The columns of the given properties, each aliased to its property. */
  select(properties: string[]): string {
    return properties
      .map((property) => {
        const column = this.columnOf(property);
        return column.databaseName === property
          ? quote(column.databaseName)
          : `${quote(column.databaseName)} AS ${quote(property)}`;
      })
      .join(', ');
  }

  /**
   * `INSERT … RETURNING` every column (as `selectList`), of the given properties as `$1`…`$n` in
   * their order; every other column takes its default.
   */
  insert(properties: (keyof E & string)[]): string {
    const columns = properties.map((property) => this.column(property)).join(', ');
    const values = properties.map((_, index) => `$${index + 1}`).join(', ');
    return `INSERT INTO ${this.table} (${columns}) VALUES (${values}) RETURNING ${this.selectList}`;
  }

  /** The quoted column of a property. */
  column(property: keyof E & string): string {
    return quote(this.columnOf(property).databaseName);
  }

  isNullable(property: keyof E & string): boolean {
    return this.columnOf(property).isNullable;
  }

  /** A row selected with `selectList`, as an instance of the entity class. */
  toEntity(row: ObjectLiteral): E {
    return Object.assign(this.metadata.create() as E, row);
  }

  private columnOf(property: string) {
    const column = this.metadata.findColumnWithPropertyName(property);
    if (!column) throw new Error(`${this.metadata.name} has no column for ${property}`);
    return column;
  }
}

function quote(identifier: string): string {
  return `"${identifier.replace(/"/g, '""')}"`;
}
