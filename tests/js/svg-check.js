// Opens a flamegraph SVG in headless Chromium (playwright-core, the
// system's /usr/bin/chromium) and checks it as a user would: the frame
// named argv[3] is drawn, a click on it zooms it to the full width, the
// search highlights the frames it matches. Saves a screenshot to argv[4].
// Prints one JSON object of measurements for tests/cli/format-svg.t.
'use strict';
const {withPage, report} = require('./browser.js');

report(async () => {
	const [svg, hot, shot] = process.argv.slice(2);
	const out = await withPage(svg, {width: 1200, height: 800}, async (page, errors) => {
		const out = {};
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
		return out;
	});
	return out;
});
