// Opens recce's profile page (agent --continuous or recce view) in
// headless Chromium and uses it as a person would: the chart and the
// flamegraph of the whole range load; with a range (FROM TO, ns since the
// epoch), a drag across the chart over it loads that range's flamegraph;
// a search highlights the frames it matches; a click on a frame zooms it
// to the full width. Saves screenshots SHOT-whole.png and SHOT-range.png.
// Prints one JSON object of what it saw for tests/cli/page.t.
//
//     node page-check.js URL SHOT [FROM TO]
'use strict';
const {withPage, report} = require('./browser.js');

const names = (page) => page.$$eval('#flame div', (ds) => [...new Set(ds.map((d) => d.dataset.name))]);

report(async () => {
	const [url, shot, from, to] = process.argv.slice(2);
	return await withPage(url, {width: 1100, height: 900}, async (page, errors) => {
		const out = {};
		try {
			await steps(page, out, shot, from, to);
		} catch (e) {
			out.error = String(e);
		}
		out.errors = errors;
		return out;
	});
});

async function steps(page, out, shot, from, to) {
		await page.waitForSelector('body[data-loaded="1"]', {timeout: 20000});
		out.title = await page.title();
		out.comms = await page.$$eval('#chart polyline', (ps) => ps.map((p) => p.dataset.comm));
		out.chartShown = await page.$eval('#chartbox', (e) => !e.classList.contains('hidden'));
		out.whole = await names(page);
		out.top = await page.$eval('#top', (e) => e.textContent);
		await page.screenshot({path: shot + '-whole.png'});
		if (from && to) {
			const box = await page.locator('#chart').boundingBox();
			const x0 = await page.evaluate((t) => recceChart.x(t), Number(from));
			const x1 = await page.evaluate((t) => recceChart.x(t), Number(to));
			await page.mouse.move(box.x + x0, box.y + 80);
			await page.mouse.down();
			await page.mouse.move(box.x + (x0 + x1) / 2, box.y + 80, {steps: 4});
			await page.mouse.move(box.x + x1, box.y + 80, {steps: 4});
			await page.mouse.up();
			await page.waitForSelector('body[data-loaded="2"]', {timeout: 20000});
			out.range = await names(page);
			out.status = await page.$eval('#status', (e) => e.textContent);
		}
		out.matched = await page.evaluate(() => searchFrames('^(work_a|burn_cpu)$'));
		out.highlighted = await page.locator('#flame div.match').count();
		const frame = page.locator('#flame div.match').first();
		out.widthBefore = (await frame.boundingBox()).width;
		await frame.click();
		out.widthAfter = (await page.locator('#flame div.match').first().boundingBox()).width;
		out.fullWidth = (await page.locator('#flame').boundingBox()).width;
		await page.screenshot({path: shot + '-range.png'});
}
