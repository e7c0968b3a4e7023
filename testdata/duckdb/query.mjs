// Runs SQL queries with DuckDB for pipeline/duckdb_test.go. Reads a JSON
// object {name: sql, ...} on standard input and writes {name: rows, ...},
// each row an object of column values (BIGINTs as strings, lists as arrays).
import { DuckDBInstance } from '@duckdb/node-api';

let input = '';
for await (const chunk of process.stdin) input += chunk;
const queries = JSON.parse(input);

const instance = await DuckDBInstance.create(':memory:');
const conn = await instance.connect();
const out = {};
for (const [name, sql] of Object.entries(queries)) {
  try {
    const reader = await conn.runAndReadAll(sql);
    out[name] = reader.getRowObjectsJson();
  } catch (err) {
    console.error(`query ${name}: ${err.message}`);
    process.exit(1);
  }
}
process.stdout.write(JSON.stringify(out));
