// Loads a file with speedscope's own importer (from the npm package's
// bundle, run under Node) and prints what it found as JSON: the profiles'
// names and frame names, or the error. Used by tests/cli/format-speedscope.t.
//
// The package ships only its web app, one bundled script. Its importer is a
// lazily loaded module inside the bundle; this script exposes it by adding
// one assignment after the bundle's own "import module" promise, and runs
// the bundle in a sandbox whose DOM is an inert stub (the app's UI is not
// wanted here, only its import code).
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');

const dir = path.join(__dirname, 'node_modules/speedscope/dist/release');
const bundle = fs.readdirSync(dir).find((f) => /^speedscope-.*\.js$/.test(f));
let src = fs.readFileSync(path.join(dir, bundle), 'utf8');
// var X=Promise.resolve().then(()=>(init(),module)); -- the importer module
const m = src.match(/var (\w+)=Promise\.resolve\(\)\.then\(\(\)=>\(\w+\(\),\w+\)\);\1\.then/);
if (!m) {
	console.log(JSON.stringify({error: 'importer not found in ' + bundle}));
	process.exit(2);
}
src = src.replace(m[0], m[0].replace(/;(\w+)\.then$/, ';globalThis.__importer=$1;$1.then'));

// An object that answers every property and call, for the DOM the app
// touches while it starts.
function inert() {
	const f = function () {
		return p;
	};
	const p = new Proxy(f, {
		get: (t, k) => (k === Symbol.toPrimitive ? () => 0 : k === 'then' ? undefined : p),
		apply: () => p,
		construct: () => p,
	});
	return p;
}
const stub = inert();
const sandbox = {
	console: {log() {}, warn() {}, error() {}, info() {}},
	window: stub,
	document: stub,
	navigator: {userAgent: 'node'},
	location: stub,
	localStorage: stub,
	setTimeout,
	clearTimeout,
	requestAnimationFrame: () => 0,
	TextDecoder,
	TextEncoder,
	URL,
	Promise,
	Uint8Array,
	ArrayBuffer,
	DataView,
	fetch: () => Promise.reject(new Error('no network')),
};
sandbox.globalThis = sandbox;
sandbox.self = sandbox;
vm.createContext(sandbox);
try {
	vm.runInContext(src, sandbox, {filename: bundle});
} catch (e) {
	// The UI's start may fail on the stub; the importer is already defined.
}
(async () => {
	const importer = await sandbox.__importer;
	const text = fs.readFileSync(process.argv[2], 'utf8');
	const group = await importer.importProfileGroupFromText(path.basename(process.argv[2]), text);
	if (!group) {
		console.log(JSON.stringify({error: 'speedscope did not recognise the file'}));
		process.exit(1);
	}
	const out = {name: group.name, profiles: []};
	for (const p of group.profiles) {
		const frames = new Set();
		p.forEachFrame((f) => frames.add(f.name));
		out.profiles.push({
			name: p.getName(),
			total: p.getTotalWeight(),
			frames: [...frames],
		});
	}
	console.log(JSON.stringify(out));
})().catch((e) => {
	console.log(JSON.stringify({error: String(e && e.stack ? e.stack : e)}));
	process.exit(1);
});
