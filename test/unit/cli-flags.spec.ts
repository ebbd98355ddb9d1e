import * as fs from 'node:fs';
import * as path from 'node:path';
import { FETCH_FLAGS, FIELD_FLAGS } from '../../src/cli/fetch-options';
import { PARSE_FLAGS } from '../../src/cli/parse';
import { PARSE_OPTIONS } from '../../src/commands/parse.dto';

/* Every option the API takes has its flag in the CLI: read from the published document. */
const doc = JSON.parse(fs.readFileSync(path.join(__dirname, '..', '..', 'openapi.json'), 'utf8'));
const props = (schema: string) => Object.keys(doc.components.schemas[schema].properties);

describe('the CLI', () => {
  it('has a flag for every fetch option of the API', () => {
    const missing = props('FetchOptionsDto').filter((f) => !FIELD_FLAGS[f]);
    expect(missing).toEqual([]);
    // And each named flag is one fetch and batch parse.
    for (const f of props('FetchOptionsDto')) {
      expect(Object.keys(FETCH_FLAGS)).toContain(FIELD_FLAGS[f].replace(/^--/, ''));
    }
  });

  it('has a flag for every field of a batch job and of its webhook', () => {
    const job = props('BatchSubmitDto').filter((f) => !['targets', 'options', 'webhook'].includes(f));
    const webhook = props('WebhookDto')
      .filter((f) => f !== 'secret') // from SIFT_WEBHOOK_SECRET, never the command line
      .map((f) => `webhook.${f}`);
    expect([...job, ...webhook].filter((f) => !FIELD_FLAGS[f])).toEqual([]);
  });

  it('parse has a flag for every option a parse takes, and none other', () => {
    const flags = PARSE_OPTIONS.map((f) => FIELD_FLAGS[f].replace(/^--/, ''));
    expect(Object.keys(PARSE_FLAGS).sort()).toEqual([...flags].sort());
  });
});
