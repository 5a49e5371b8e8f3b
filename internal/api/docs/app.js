// Renders the API's OpenAPI document (v1/openapi.json) for people: the
// operations by tag, with their parameters, bodies, responses and problem
// codes, then the schemas. No dependencies; it builds the DOM, never HTML
// strings.
"use strict";

(function () {
  const main = document.getElementById("main");
  const nav = document.getElementById("nav");
  const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];
  let doc;

  function h(tag, attrs, ...kids) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v == null || v === false) continue;
      if (k === "class") el.className = v;
      else el.setAttribute(k, v === true ? "" : v);
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid == null || kid === false || kid === "") continue;
      el.append(kid instanceof Node ? kid : String(kid));
    }
    return el;
  }

  function join(parts, sep) {
    return parts.flatMap((p, i) => (i ? [sep, p] : [p]));
  }

  // deref follows a local $ref such as "#/components/schemas/Tenant".
  function deref(obj) {
    if (!obj || !obj.$ref || !obj.$ref.startsWith("#/")) return obj;
    return obj.$ref.slice(2).split("/")
      .map((k) => k.replace(/~1/g, "/").replace(/~0/g, "~"))
      .reduce((o, k) => (o ? o[k] : undefined), doc);
  }

  const refName = (ref) => ref.split("/").pop();

  // typeOf says what a schema holds in a few words, linking named schemas.
  function typeOf(s) {
    if (!s || typeof s !== "object") return "any";
    if (s.$ref) return h("a", { href: "#schema-" + refName(s.$ref) }, refName(s.$ref));
    if (s.allOf) return join(s.allOf.map(typeOf), " & ");
    if (s.anyOf || s.oneOf) return join((s.anyOf || s.oneOf).map(typeOf), " | ");
    if ("const" in s) return JSON.stringify(s.const);
    const types = [].concat(s.type || []);
    if (!types.length) return s.properties ? "object" : "any JSON";
    return join(types.map((t) => {
      if (t === "array") return ["array of ", typeOf(s.items)];
      if (t === "object" && s.additionalProperties && typeof s.additionalProperties === "object") {
        return ["map of ", typeOf(s.additionalProperties)];
      }
      return s.format ? t + " (" + s.format + ")" : t;
    }), " | ");
  }

  // facts lists a schema's constraints: enum, bounds, default.
  function facts(s) {
    if (!s || typeof s !== "object") return [];
    const out = [];
    const items = s.items && !s.items.$ref ? s.items : null;
    const values = s.enum || (items && items.enum);
    if (values) out.push(h("div", { class: "muted" }, "one of ", join(values.map((v) => h("code", {}, String(v))), ", ")));
    if (s.minimum != null || s.maximum != null) out.push(h("div", { class: "muted" }, "from ", s.minimum ?? "−∞", " to ", s.maximum ?? "∞"));
    if (s.default != null) out.push(h("div", { class: "muted" }, "default ", h("code", {}, JSON.stringify(s.default))));
    if (s.additionalProperties === false) out.push(h("div", { class: "muted" }, "no other members"));
    return out;
  }

  // members renders an object schema's properties as a table.
  function members(s) {
    s = deref(s);
    if (!s || !s.properties) return null;
    const required = new Set(s.required || []);
    return h("table", {},
      h("tr", {}, h("th", {}, "Field"), h("th", {}, "Type"), h("th", {}, "Description")),
      Object.entries(s.properties).map(([name, p]) => h("tr", {},
        h("td", {}, h("code", {}, name), required.has(name) && h("span", { class: "req" }, "required")),
        h("td", {}, typeOf(p)),
        h("td", {}, (p && p.description) || "", facts(p)))));
  }

  // body shows a request or response body: its media types and schema.
  function body(content) {
    return Object.entries(content || {}).map(([type, media]) => {
      const s = media.schema || {};
      const codes = problemCodes(s);
      const shown = codes ? s.allOf.find((part) => part.$ref) || s : s;
      return h("div", { class: "schema" },
        h("div", {}, h("code", {}, type), " · ", typeOf(shown)),
        codes && h("div", {}, "code: ", join(codes.map((c) => h("code", {}, c)), ", ")),
        !codes && s.$ref && h("details", {}, h("summary", {}, "fields"), members(s)),
        !s.$ref && s.description && h("div", { class: "muted" }, s.description));
    });
  }

  // problemCodes are the codes a problem response names, if it does.
  function problemCodes(s) {
    for (const part of s.allOf || []) {
      const code = part.properties && part.properties.code;
      if (code && code.enum) return code.enum;
    }
    return null;
  }

  function parameters(op) {
    const params = (op.parameters || []).map(deref);
    if (!params.length) return null;
    return [h("h4", {}, "Parameters"), h("table", {},
      h("tr", {}, h("th", {}, "Name"), h("th", {}, "In"), h("th", {}, "Type"), h("th", {}, "Description")),
      params.map((p) => h("tr", {},
        h("td", {}, h("code", {}, p.name), p.required && h("span", { class: "req" }, "required")),
        h("td", {}, p.in),
        h("td", {}, typeOf(p.schema)),
        h("td", {}, p.description || "", facts(p.schema)))))];
  }

  function responses(op) {
    return [h("h4", {}, "Responses"), h("table", {},
      h("tr", {}, h("th", {}, "Status"), h("th", {}, "Meaning"), h("th", {}, "Headers")),
      Object.entries(op.responses || {}).map(([status, r]) => {
        r = deref(r);
        return h("tr", {},
          h("td", {}, h("span", { class: "status s" + status[0] }, status)),
          h("td", {}, r.description || "", body(r.content)),
          h("td", {}, join(Object.keys(r.headers || {}).map((n) => h("code", { title: (deref(r.headers[n]) || {}).description || "" }, n)), ", ")));
      }))];
  }

  function access(op) {
    const level = op["x-landlord-access"];
    if (level === "open") return "no token";
    if (level === "write") return "admin token";
    return "any token";
  }

  function operation(path, method, op) {
    const id = op.operationId || method + path;
    const search = [method, path, op.summary, op.operationId, (op.tags || []).join(" ")].join(" ").toLowerCase();
    const req = op.requestBody && deref(op.requestBody);
    return h("section", { class: "op", id: id, "data-search": search },
      h("h3", {},
        h("span", { class: "method " + method }, method.toUpperCase()),
        h("code", {}, path),
        h("span", { class: "badge" }, access(op))),
      op.summary && h("p", {}, op.summary),
      op.description && h("p", { class: "muted" }, op.description),
      parameters(op),
      req && [h("h4", {}, "Request body"), body(req.content)],
      responses(op));
  }

  function render() {
    const info = doc.info || {};
    document.title = (info.title || "API") + " reference";
    document.getElementById("title").textContent = (info.title || "API") + " API";
    document.getElementById("version").textContent = "version " + (info.version || "?") + " · OpenAPI " + doc.openapi;

    const byTag = new Map((doc.tags || []).map((t) => [t.name, { tag: t, ops: [] }]));
    for (const [path, item] of Object.entries(doc.paths || {})) {
      for (const method of methods) {
        const op = item[method];
        if (!op) continue;
        const tag = (op.tags && op.tags[0]) || "other";
        if (!byTag.has(tag)) byTag.set(tag, { tag: { name: tag }, ops: [] });
        byTag.get(tag).ops.push([path, method, op]);
      }
    }

    const content = [info.description && h("p", {}, info.description)];
    const links = [];
    for (const { tag, ops } of byTag.values()) {
      if (!ops.length) continue;
      content.push(h("h2", { id: "tag-" + tag.name }, tag.name), tag.description && h("p", { class: "muted" }, tag.description));
      links.push(h("h2", {}, tag.name));
      for (const [path, method, op] of ops) {
        content.push(operation(path, method, op));
        links.push(h("a", { href: "#" + (op.operationId || method + path) },
          h("span", { class: "mono muted" }, method.toUpperCase().padEnd(6, "\u00a0")), h("span", { class: "path" }, path)));
      }
    }

    const schemas = (doc.components && doc.components.schemas) || {};
    content.push(h("h2", { id: "schemas" }, "Schemas"));
    links.push(h("h2", {}, h("a", { href: "#schemas" }, "Schemas")));
    for (const [name, s] of Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))) {
      content.push(h("section", { class: "op", id: "schema-" + name },
        h("h3", {}, h("code", {}, name)),
        s.description && h("p", { class: "muted" }, s.description),
        members(s) || h("div", {}, typeOf(s)), facts(s)));
    }
    main.replaceChildren(...content.flat().filter(Boolean));
    nav.replaceChildren(...links);
    if (location.hash) {
      const target = document.getElementById(location.hash.slice(1));
      if (target) target.scrollIntoView();
    }
  }

  document.getElementById("filter").addEventListener("input", (e) => {
    const q = e.target.value.trim().toLowerCase();
    for (const el of main.querySelectorAll("section[data-search]")) {
      el.hidden = q !== "" && !el.dataset.search.includes(q);
    }
  });

  fetch("v1/openapi.json", { headers: { Accept: "application/json" } })
    .then((r) => {
      if (!r.ok) throw new Error("the server answered " + r.status);
      return r.json();
    })
    .then((d) => {
      doc = d;
      render();
    })
    .catch((err) => {
      main.replaceChildren(h("p", { class: "error" }, "Could not load the API description: " + err.message));
    });
})();
