// Checks GraphQL documents against Linear's schema types from the contract index
// (tests/contract/build-index.mjs): every selected field exists on its type and is not deprecated,
// every argument exists on the field, every variable's type exists, and the object variables carry
// only fields their input type declares (and all it requires). Reads
// [{tool, query, variables}] as JSON on stdin, writes [{tool, problem}] on stdout.
// Usage: node graphql-check.mjs <.deps/contracts>
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const deps = path.resolve(process.argv[2]);
const { parse } = await import(pathToFileURL(path.join(deps, "node_modules/graphql/index.mjs")).href);
const schema = JSON.parse(fs.readFileSync(path.join(deps, "index.json"), "utf8")).providers.linear.graphql;
const { types } = schema;
const builtins = new Set(["ID", "String", "Boolean", "Int", "Float", ...schema.scalars]);
const known = (t) => builtins.has(t) || schema.enums.includes(t) || t in types;
const cap = (s) => s[0].toUpperCase() + s.slice(1);

const docs = JSON.parse(fs.readFileSync(0, "utf8"));
const problems = [];
for (const { tool, query, variables } of docs) {
  const say = (problem) => problems.push({ tool, problem });
  let doc;
  try {
    doc = parse(query);
  } catch (e) {
    say(`does not parse: ${e.message}`);
    continue;
  }
  const varTypes = {};
  const walk = (selections, typeName, where) => {
    const fields = types[typeName];
    if (!fields) return; // a union or interface the SDK types do not spell out: not checked deeper
    for (const sel of selections) {
      if (sel.kind === "InlineFragment") {
        walk(sel.selectionSet.selections, sel.typeCondition?.name.value || typeName, where);
        continue;
      }
      if (sel.kind !== "Field") continue;
      const name = sel.name.value;
      if (name === "__typename") continue;
      const f = fields[name];
      if (!f) {
        say(`${where}: ${typeName} has no field '${name}'`);
        continue;
      }
      if (f.deprecated) say(`${where}: ${typeName}.${name} is deprecated (${f.deprecated})`);
      const args = types[`${typeName}${cap(name)}Args`] || {};
      for (const a of sel.arguments || []) {
        if (!(a.name.value in args)) say(`${where}: ${typeName}.${name} has no argument '${a.name.value}'`);
        else if (a.value.kind === "Variable") varTypes[a.value.name.value] ??= args[a.name.value].type;
      }
      for (const [an, a] of Object.entries(args)) {
        if (a.required && !(sel.arguments || []).some((x) => x.name.value === an)) say(`${where}: ${typeName}.${name} needs argument '${an}'`);
      }
      if (sel.selectionSet) walk(sel.selectionSet.selections, f.type, `${where}.${name}`);
    }
  };
  for (const def of doc.definitions) {
    if (def.kind !== "OperationDefinition") continue;
    const root = def.operation === "mutation" ? "Mutation" : "Query";
    for (const v of def.variableDefinitions || []) {
      let t = v.type;
      while (t.type) t = t.type;
      if (!known(t.name.value)) say(`variable $${v.variable.name.value} has unknown type ${t.name.value}`);
    }
    walk(def.selectionSet.selections, root, def.name?.value || root);
  }
  // Input objects: the variables' own fields against their declared input types.
  const checkInput = (value, typeName, where) => {
    const fields = types[typeName];
    if (!fields || value === null || typeof value !== "object" || Array.isArray(value)) return;
    for (const [k, v] of Object.entries(value)) {
      if (!(k in fields)) say(`${where}: input ${typeName} has no field '${k}'`);
      else {
        if (fields[k].deprecated) say(`${where}: input ${typeName}.${k} is deprecated (${fields[k].deprecated})`);
        checkInput(v, fields[k].type, `${where}.${k}`);
      }
    }
    for (const [k, f] of Object.entries(fields)) if (f.required && !(k in value)) say(`${where}: input ${typeName} needs '${k}'`);
  };
  for (const [name, t] of Object.entries(varTypes)) checkInput(variables?.[name], t, `$${name}`);
}
process.stdout.write(JSON.stringify(problems));
