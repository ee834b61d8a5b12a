// Solves CPLEX LP files with HiGHS (npm package "highs", WebAssembly),
// loaded once, and prints one JSON line per file, in order:
// {"file", "status", "objective", "ones"}. Used by the cross-check suite;
// install with `npm install --prefix bin/npm highs@1.15.3`.
// Usage: node highs.js LIMIT_SECONDS FILE...
const fs = require('fs');
const load = require('highs');
(async () => {
  const highs = await load();
  const limit = Number(process.argv[2]);
  for (const file of process.argv.slice(3)) {
    let out;
    try {
      const text = fs.readFileSync(file, 'utf8');
      // mip_rel_gap 0: a flattened objective needs every unit (solver-notes §4.2).
      const sol = highs.solve(text, { time_limit: limit, mip_rel_gap: 0, output_flag: false });
      const ones = Object.entries(sol.Columns || {})
        .filter(([, c]) => Math.round(c.Primal) === 1)
        .map(([name]) => name);
      out = { file, status: sol.Status, objective: sol.ObjectiveValue, ones };
    } catch (e) {
      out = { file, status: 'error: ' + e };
    }
    console.log(JSON.stringify(out));
  }
})();
