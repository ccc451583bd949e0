// What a test file declares and what its process reported, and the check between them that scripts/run-tests.mjs
// runs on every file: a file whose process ends before all its results reached the runner fails the run, so a lost
// result is never a silently smaller count.
import ts from 'typescript';

const DEFINERS = new Set(['test', 'it', 'describe', 'suite']);
const MODIFIERS = new Set(['skip', 'todo', 'only', 'expectFailure']);

/**
 * The test()/it()/describe()/suite() call sites of node:test in a file's source (`.skip`, `.todo`, `.only` too) that
 * are not inside another one: each registers at least one test while the file loads (once per pass of a loop).
 * Those inside a suite or a test register when it runs, which a skipped suite never does, and helpers that declare
 * tests do so elsewhere: test-registrations.mjs counts all of them at run time.
 */
export function declaredCallSites(source, fileName = 'file.ts') {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.Latest, true);
  const definers = new Set();
  const namespaces = new Set();
  for (const statement of file.statements) {
    if (!ts.isImportDeclaration(statement) || statement.moduleSpecifier.text !== 'node:test') continue;
    const clause = statement.importClause;
    if (!clause || clause.isTypeOnly) continue;
    if (clause.name) definers.add(clause.name.text); // the default export is test()
    const bindings = clause.namedBindings;
    if (bindings && ts.isNamespaceImport(bindings)) namespaces.add(bindings.name.text);
    if (bindings && ts.isNamedImports(bindings)) {
      for (const element of bindings.elements) {
        const imported = (element.propertyName ?? element.name).text;
        if (!element.isTypeOnly && DEFINERS.has(imported)) definers.add(element.name.text);
      }
    }
  }
  const isDefiner = (node) =>
    (ts.isIdentifier(node) && definers.has(node.text)) ||
    (ts.isPropertyAccessExpression(node) &&
      ts.isIdentifier(node.expression) &&
      namespaces.has(node.expression.text) &&
      DEFINERS.has(node.name.text));
  let count = 0;
  const visit = (node) => {
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      if (
        isDefiner(callee) ||
        (ts.isPropertyAccessExpression(callee) &&
          MODIFIERS.has(callee.name.text) &&
          isDefiner(callee.expression))
      ) {
        count++;
        return;
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return count;
}

/** A results file (test-registrations.mjs and test-results-reporter.mjs write it) read back: `cpuMs` is the CPU
 * time of the file's process and the children it waited for, when it got to exit normally on Linux. */
export function readResults(text) {
  const registered = [];
  const results = [];
  let plan;
  let cpuMs;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const entry = JSON.parse(line);
    if ('registered' in entry) registered.push(entry.registered);
    else if ('plan' in entry) plan = entry.plan;
    else if ('cpuMs' in entry) cpuMs = entry.cpuMs;
    else results.push(entry);
  }
  return { registered, results, plan, cpuMs };
}

/** Counts of a file's results as the runner's summary gives them (suites are not tests). */
export function tally(results) {
  const counts = { tests: 0, pass: 0, fail: 0, skipped: 0, todo: 0 };
  for (const result of results) {
    if (result.suite) {
      if (result.result === 'fail') counts.fail++;
      continue;
    }
    counts.tests++;
    if (result.skip) counts.skipped++;
    else if (result.todo) counts.todo++;
    else counts[result.result]++;
  }
  return counts;
}

/**
 * What is missing from a file's report, or undefined when nothing is: every test it declares (its call sites, and
 * every registration at run time) has a result (skips and todos count), and its root reported its plan.
 */
export function lostResults({ callSites, registered, results, plan }) {
  const declared = Math.max(callSites, registered.length);
  const unanswered = new Map();
  for (const name of registered) unanswered.set(name, (unanswered.get(name) ?? 0) + 1);
  for (const { name } of results) {
    const left = unanswered.get(name);
    if (left !== undefined) unanswered.set(name, left - 1);
  }
  const missing = [...unanswered].flatMap(([name, left]) => Array(Math.max(left, 0)).fill(name));
  if (results.length >= declared && missing.length === 0 && plan !== undefined) return undefined;
  return { declared, reported: results.length, missing, planned: plan !== undefined };
}
