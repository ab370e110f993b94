// Opens a flamegraph SVG in headless Chromium (playwright-core, the
// system's /usr/bin/chromium) and checks it as a user would: the frame
// named argv[3] is drawn, a click on it zooms it to the full width, the
// search highlights the frames it matches. Saves a screenshot to argv[4].
// Prints one JSON object of measurements for tests/cli/format-svg.t.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const {chromium} = require('playwright-core');

(async () => {
	const [svg, hot, shot] = process.argv.slice(2);
	const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'recce-chromium-'));
	const browser = await chromium.launchPersistentContext(profile, {
		executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
		headless: true,
		viewport: {width: 1200, height: 800},
		args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking',
		       '--disable-component-update', '--disable-sync', '--no-first-run'],
	});
	const out = {};
	try {
		const page = await browser.newPage();
		const errors = [];
		page.on('pageerror', (e) => errors.push(String(e)));
		await page.goto('file://' + path.resolve(svg));
		const sel = `g.frame[data-name="${hot}"]`;
		out.present = (await page.locator(sel).count()) > 0;
		const rect = page.locator(sel + ' rect').first();
		out.widthBefore = Number(await rect.getAttribute('width'));
		await page.locator(sel).first().click();
		out.widthAfter = Number(await rect.getAttribute('width'));
		out.fullWidth = await page.evaluate(() => config.frameWidth);
		out.unzoomShown = await page.evaluate(
			() => !document.getElementById('unzoom').classList.contains('hide'));
		await page.evaluate(() => resetZoom());
		out.matchedPercent = await page.evaluate((n) => searchFrames('^' + n + '$'), hot);
		out.highlighted = await page.locator('g.frame.match').count();
		out.highlightedFill = await page.locator('g.frame.match rect').first().getAttribute('fill');
		await page.screenshot({path: shot});
		out.errors = errors;
	} finally {
		await browser.close();
		fs.rmSync(profile, {recursive: true, force: true});
	}
	console.log(JSON.stringify(out));
})().catch((e) => {
	console.log(JSON.stringify({error: String(e)}));
	process.exit(1);
});
