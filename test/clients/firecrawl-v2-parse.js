// Sends a file to sift's Firecrawl v2 parse route (the API URL given: …/firecrawl) with Firecrawl's
// JavaScript SDK, unchanged (pinned in package.json beside this file; run by
// test/e2e/firecrawl-clients.spec.ts under Node 24, which the SDK needs). Prints one JSON object:
// the parsed document, or the error.
const fs = require('node:fs');
const { Firecrawl } = require('firecrawl');

const [base, token, file, filename, contentType] = process.argv.slice(2);
const app = new Firecrawl({ apiKey: token, apiUrl: base });

app
  .parse({ data: fs.readFileSync(file), filename, contentType }, { formats: ['markdown', 'html'] })
  .then(
    (ok) => console.log(JSON.stringify({ ok })),
    (e) => console.log(JSON.stringify({ error: { message: e.message, status: e.statusCode ?? e.status } })),
  );
