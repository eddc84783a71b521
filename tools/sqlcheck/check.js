// Reads a JSON array of Druid SQL statements on stdin and parses each with
// Druid's web-console parser (druid-query-toolkit's SqlQuery.parse). Prints
// a JSON array with, for each statement, null when it parses or the
// parser's message when it does not.
const { SqlQuery } = require('druid-query-toolkit');

let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', () => {
  const out = JSON.parse(input).map((sql) => {
    try {
      SqlQuery.parse(sql);
      return null;
    } catch (e) {
      return String(e && e.message ? e.message : e);
    }
  });
  process.stdout.write(JSON.stringify(out));
});
