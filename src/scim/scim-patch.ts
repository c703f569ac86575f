import type { Filter } from 'scim2-parse-filter';
import { ScimError } from './scim-error.js';
import { parseFilter } from './scim-filter.js';
import { ENTERPRISE_USER, PATCH_OP, type ResolvedPath, resolveUserPath } from './scim-schema.js';
import { isObject, type PathResolver, type ScimObject } from './scim-user-resource.js';

export interface PatchOperation {
  op: 'add' | 'replace' | 'remove';
  path?: string;
  value?: unknown;
}

const invalidSyntax = (message: string) => new ScimError(400, message, 'invalidSyntax');
const MAX_OPERATIONS = 100;

/** The operations of a PatchOp body; operation names in any case (Entra ID sends `Replace`). */
export function parsePatch(body: unknown): PatchOperation[] {
  if (!isObject(body)) throw invalidSyntax('the body must be a JSON object');
  const { schemas, Operations: operations } = body;
  if (!Array.isArray(schemas) || !schemas.includes(PATCH_OP)) {
    throw invalidSyntax(`schemas must be ["${PATCH_OP}"]`);
  }
  if (!Array.isArray(operations) || operations.length === 0 || operations.length > MAX_OPERATIONS) {
    throw invalidSyntax(`Operations must be an array of 1 to ${MAX_OPERATIONS} operations`);
  }
  return operations.map((operation: unknown, index) => {
    if (!isObject(operation) || typeof operation.op !== 'string') {
      throw invalidSyntax(`Operations[${index}] must be an object with op`);
    }
    const op = operation.op.toLowerCase();
    if (op !== 'add' && op !== 'replace' && op !== 'remove') {
      throw invalidSyntax(`Operations[${index}].op must be add, replace or remove`);
    }
    const { path, value } = operation;
    if (path !== undefined && typeof path !== 'string') {
      throw new ScimError(400, `Operations[${index}].path must be a string`, 'invalidPath');
    }
    if (op !== 'remove' && value === undefined) {
      throw invalidSyntax(`Operations[${index}] (${op}) needs a value`);
    }
    return { op, path, value };
  });
}

export interface Target {
  resolved: ResolvedPath;
  filter?: Filter;
  /** The sub-attribute after a value filter: `emails[type eq "work"].value`. */
  sub?: string;
}

/**
 * `attr`, `attr.sub`, `attr[filter]`, `attr[filter].sub`, each maybe URN-prefixed, resolved
 * against a resource type's schemas (the User's unless told).
 */
export function targetOf(path: string, resolve: PathResolver = resolveUserPath): Target {
  const match = /^([^[\]]+?)(?:\[(.+)\](?:\.([A-Za-z][\w$-]*))?)?$/.exec(path.trim());
  const resolved = match ? resolve(match[1]) : undefined;
  if (!match || !resolved) throw new ScimError(400, `${path} is not a valid path`, 'invalidPath');
  const target: Target = { resolved };
  if (match[2] !== undefined) {
    if (!resolved.attribute.multiValued || resolved.sub) {
      throw new ScimError(
        400,
        `${path}: only a multi-valued attribute takes a filter`,
        'invalidPath',
      );
    }
    target.filter = parseFilter(match[2]);
    if (match[3] !== undefined) {
      const sub = resolve(`${resolved.attribute.name}.${match[3]}`);
      if (!sub?.sub) throw new ScimError(400, `${path} is not a valid path`, 'invalidPath');
      target.sub = sub.sub.name;
    }
  }
  const readOnly = [resolved.attribute, resolved.sub].some((a) => a?.mutability === 'readOnly');
  if (readOnly) throw new ScimError(400, `${path} is read-only`, 'mutability');
  return target;
}

const fold = (value: unknown) => (typeof value === 'string' ? value.toLowerCase() : value);

/** An element's value of a sub-attribute, its name matched ignoring case (RFC 7644 §3.4.2.2). */
function valueOf(element: ScimObject, name: string): unknown {
  if (name in element) return element[name];
  const lower = name.toLowerCase();
  const key = Object.keys(element).find((candidate) => candidate.toLowerCase() === lower);
  return key === undefined ? undefined : element[key];
}

/** Whether an element of a multi-valued attribute matches a value filter (in memory). */
export function matches(element: ScimObject, filter: Filter): boolean {
  switch (filter.op) {
    case 'and':
      return filter.filters.every((part) => matches(element, part));
    case 'or':
      return filter.filters.some((part) => matches(element, part));
    case 'not':
      return !matches(element, filter.filter);
    case '[]':
      throw new ScimError(400, 'value filters cannot be nested', 'invalidFilter');
    case 'pr':
      return (
        valueOf(element, filter.attrPath) !== undefined &&
        valueOf(element, filter.attrPath) !== null
      );
  }
  const actual = fold(valueOf(element, filter.attrPath));
  const expected = fold(filter.compValue);
  switch (filter.op) {
    case 'eq':
      return actual === expected;
    case 'ne':
      return actual !== expected;
    case 'co':
      return typeof actual === 'string' && actual.includes(String(expected));
    case 'sw':
      return typeof actual === 'string' && actual.startsWith(String(expected));
    case 'ew':
      return typeof actual === 'string' && actual.endsWith(String(expected));
    default:
      throw new ScimError(400, `${filter.op} is not supported in a value filter`, 'invalidFilter');
  }
}

/** The element a filter of `eq`s describes (`type eq "work"`), to add when none matches. */
function describedElement(filter: Filter): ScimObject | undefined {
  if (filter.op === 'eq') return { [filter.attrPath]: filter.compValue };
  if (filter.op !== 'and') return undefined;
  const parts = filter.filters.map(describedElement);
  return parts.every(Boolean) ? (Object.assign({}, ...parts) as ScimObject) : undefined;
}

/** Keeps a single primary: the one just written (RFC 7643 §2.4). */
function onePrimary(elements: ScimObject[], written: ScimObject[]): void {
  const primary = written.find((element) => element.primary === true);
  if (!primary) return;
  for (const element of elements) if (element !== primary) delete element.primary;
}

function apply(resource: ScimObject, op: PatchOperation['op'], target: Target, value: unknown) {
  const { resolved, filter, sub } = target;
  const { attribute, extension } = resolved;
  const container = extension ? ((resource[extension] as ScimObject | undefined) ??= {}) : resource;
  const name = attribute.name;
  const subName = resolved.sub?.name ?? sub;
  if (attribute.multiValued) {
    const elements = Array.isArray(container[name]) ? (container[name] as ScimObject[]) : [];
    container[name] = elements;
    const selected = filter ? elements.filter((element) => matches(element, filter)) : elements;
    if (op === 'remove') {
      if (subName) for (const element of selected) delete element[subName];
      else container[name] = elements.filter((element) => !selected.includes(element));
      return;
    }
    if (!filter && !subName) {
      const values = (Array.isArray(value) ? value : [value]) as ScimObject[];
      container[name] = op === 'add' ? [...elements, ...values] : values;
      onePrimary(container[name] as ScimObject[], values);
      return;
    }
    if (selected.length === 0 && filter) {
      const created = describedElement(filter);
      if (!created) throw new ScimError(400, `no ${name} value matches the filter`, 'noTarget');
      selected.push(created);
      elements.push(created);
    }
    for (const element of selected) {
      if (subName) element[subName] = value;
      else if (isObject(value)) Object.assign(element, value);
    }
    onePrimary(elements, selected);
    return;
  }
  if (op === 'remove') {
    if (subName && isObject(container[name])) delete container[name][subName];
    else if (!subName) delete container[name];
    return;
  }
  if (subName) {
    const parent = isObject(container[name]) ? container[name] : {};
    container[name] = { ...parent, [subName]: value };
  } else if (attribute.type === 'complex' && isObject(value) && isObject(container[name])) {
    container[name] = { ...container[name], ...value };
  } else {
    container[name] = value;
  }
}

/**
 * RFC 7644 §3.5.2 on a resource in memory: the result is checked as a whole afterwards, so the
 * operations apply all together or not at all.
 */
export function applyPatch(resource: ScimObject, operations: PatchOperation[]): ScimObject {
  const patched = structuredClone(resource);
  for (const { op, path, value } of operations) {
    if (path !== undefined) {
      apply(patched, op, targetOf(path), value);
      continue;
    }
    if (op === 'remove') throw new ScimError(400, 'remove needs a path', 'noTarget');
    if (!isObject(value)) throw invalidSyntax(`${op} without a path takes an object value`);
    for (const [key, item] of Object.entries(value)) {
      if (key.toLowerCase() === 'schemas') continue;
      if (key.toLowerCase() === ENTERPRISE_USER.toLowerCase() && isObject(item)) {
        for (const [inner, innerValue] of Object.entries(item)) {
          apply(patched, op, targetOf(`${ENTERPRISE_USER}:${inner}`), innerValue);
        }
      } else {
        apply(patched, op, targetOf(key), item);
      }
    }
  }
  return patched;
}
