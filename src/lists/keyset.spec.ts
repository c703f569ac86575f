import { keysetCondition, type KeysetColumn } from './keyset.js';

const id: KeysetColumn = { column: 'id', direction: 'ASC', nullable: false };
const placeholders = () => {
  let n = 0;
  return () => `$${++n}`;
};

describe(keysetCondition.name, () => {
  it('compares one key directly', () => {
    expect(keysetCondition([id], [7], placeholders())).toBe('id > $1');
    expect(keysetCondition([{ ...id, direction: 'DESC' }], [7], placeholders())).toBe('id < $1');
  });

  it('compares keys of one direction as a row, which an index answers directly', () => {
    const name: KeysetColumn = { column: 'name', direction: 'ASC', nullable: false };
    expect(keysetCondition([name, id], ['Ada', 7], placeholders())).toBe('(name, id) > ($1, $2)');
  });

  it('spells out mixed directions, led by a bound on the first key', () => {
    const created: KeysetColumn = { column: 'created_at', direction: 'DESC', nullable: false };
    expect(keysetCondition([created, id], ['2026-01-01T00:00:00.000Z', 7], placeholders())).toBe(
      'created_at <= $1 AND (created_at < $1 OR created_at = $1 AND id > $2)',
    );
  });

  describe('a nullable key (NULLs last ascending, first descending)', () => {
    const email: KeysetColumn = { column: 'email', direction: 'ASC', nullable: true };

    it('ascending from a value: greater values, then the NULLs', () => {
      expect(keysetCondition([email, id], ['a@x', 7], placeholders())).toBe(
        '((email > $1 OR email IS NULL) OR email = $1 AND id > $2)',
      );
    });

    it('ascending from NULL: only the NULLs with a greater id', () => {
      expect(keysetCondition([email, id], [null, 7], placeholders())).toBe(
        '(email IS NULL AND id > $1)',
      );
    });

    it('descending from NULL: every value, then the NULLs with a greater id', () => {
      expect(
        keysetCondition([{ ...email, direction: 'DESC' }, id], [null, 7], placeholders()),
      ).toBe('(email IS NOT NULL OR email IS NULL AND id > $1)');
    });

    it('descending from a value: smaller values only', () => {
      expect(
        keysetCondition([{ ...email, direction: 'DESC' }, id], ['b@x', 7], placeholders()),
      ).toBe('(email < $1 OR email = $1 AND id > $2)');
    });
  });
});
