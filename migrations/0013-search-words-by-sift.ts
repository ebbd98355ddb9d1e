import { Kysely, PostgresAdapter, sql } from 'kysely';

// Frozen in time: literals only. PostgreSQL: a document's words are no longer worked out by the
// database (a generated column, to_tsvector) but given with the document by sift. The column
// becomes a plain one; the documents stored so far have it cleared, and sift gives them their
// words after it starts (SearchStore.indexWaiting), the partial index finding them. SQLite's
// full-text index is unchanged.
export async function up(db: Kysely<any>): Promise<void> {
  if (!(db.getExecutor().adapter instanceof PostgresAdapter)) return;
  await sql`ALTER TABLE search_doc ALTER COLUMN tsv DROP EXPRESSION`.execute(db);
  await sql`UPDATE search_doc SET tsv = NULL`.execute(db);
  await sql`CREATE INDEX search_doc_waiting ON search_doc (id) WHERE tsv IS NULL`.execute(db);
}
