import { CommitOutcomeUnknownError, isSyncReplicationWaitCancelled } from './commit-outcome.js';

const DETAIL =
  'The transaction has already committed locally, but might not have been replicated to the standby.';

describe(isSyncReplicationWaitCancelled.name, () => {
  it('recognises the warning of a cancelled wait (a cancel request, statement_timeout)', () => {
    expect(
      isSyncReplicationWaitCancelled({
        severity: 'WARNING',
        message: 'canceling wait for synchronous replication due to user request',
        detail: DETAIL,
      }),
    ).toBe(true);
  });

  it('recognises the warning of a terminated wait (pg_terminate_backend, a fast shutdown)', () => {
    expect(
      isSyncReplicationWaitCancelled({
        severity: 'WARNING',
        message:
          'canceling the wait for synchronous replication and terminating connection due to administrator command',
        detail: DETAIL,
      }),
    ).toBe(true);
  });

  it('recognises the warning by the routine that raised it, whatever the language of its text', () => {
    // lc_messages = 'de_DE': the text is translated, the routine and file fields never are.
    expect(
      isSyncReplicationWaitCancelled({
        severity: 'WARNUNG',
        message: 'Warten auf synchrone Replikation wird abgebrochen wegen Benutzeraufforderung',
        detail:
          'Die Transaktion wurde lokal bereits committet, aber möglicherweise noch nicht zum Standby repliziert.',
        routine: 'SyncRepWaitForLSN',
        file: 'syncrep.c',
      }),
    ).toBe(true);
  });

  it('ignores other notices', () => {
    expect(
      isSyncReplicationWaitCancelled({
        severity: 'WARNING',
        message: 'there is no transaction in progress',
      }),
    ).toBe(false);
    expect(isSyncReplicationWaitCancelled({ severity: 'NOTICE', message: 'relation exists' })).toBe(
      false,
    );
    expect(
      isSyncReplicationWaitCancelled({
        severity: 'WARNUNG',
        message: 'es ist keine Transaktion offen',
        routine: 'EndTransactionBlock',
        file: 'xact.c',
      }),
    ).toBe(false);
  });
});

describe(CommitOutcomeUnknownError.name, () => {
  it('carries SQLSTATE 08007 (transaction_resolution_unknown), a connection exception', () => {
    expect(new CommitOutcomeUnknownError('the connection broke')).toMatchObject({
      code: '08007',
      name: 'CommitOutcomeUnknownError',
      message: 'the outcome of the commit is unknown: the connection broke',
    });
  });
});
