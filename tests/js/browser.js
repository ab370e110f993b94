// The headless Chromium the page tests share (playwright-core, the
// system's /usr/bin/chromium or $CHROMIUM): withPage(file, viewport, fn)
// opens a file (or an http:// or https:// address; the agent's own CA is
// not Chromium's, so certificate errors are let through: curl checks the
// certificate in the tests) in a fresh profile, runs fn(page, errors) with the page
// errors collected, and closes everything however fn ends; report(check)
// prints what a check found.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const {chromium} = require('playwright-core');

async function withPage(file, viewport, fn) {
	const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'recce-chromium-'));
	const browser = await chromium.launchPersistentContext(profile, {
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		headless: true,
		viewport,
		ignoreHTTPSErrors: true,
		args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
		       '--disable-component-update', '--disable-sync', '--no-first-run'],
	});
	try {
		const page = await browser.newPage();
		const errors = [];
		page.on('pageerror', (e) => errors.push(String(e)));
		await page.goto(/^https?:/.test(file) ? file : 'file://' + path.resolve(file));
		return await fn(page, errors);
	} finally {
		await browser.close();
		fs.rmSync(profile, {recursive: true, force: true});
	}
}

// Runs a check and prints its result as one JSON object, or the error
// that stopped it (and exits 1).
function report(check) {
	check().then((out) => console.log(JSON.stringify(out)), (e) => {
		console.log(JSON.stringify({error: String(e)}));
		process.exit(1);
	});
}

module.exports = {withPage, report};
