// Opens a plot SVG of `recce trace --plot` in headless Chromium
// (playwright-core, the system's /usr/bin/chromium) and measures it as a
// reader sees it: the points drawn, each inside the plot's axes, the
// axis labels, and the page's errors. Saves a screenshot to argv[3].
// Prints one JSON object for tests/cli/trace-plot.t.
'use strict';
const {withPage, report} = require('./browser.js');

report(async () => {
	const [svg, shot] = process.argv.slice(2);
	const out = await withPage(svg, {width: 1000, height: 600}, async (page, errors) => {
		const out = {};
		Object.assign(out, await page.evaluate(() => {
			const axes = [...document.querySelectorAll('line.axis')].map((l) => l.getBBox());
			const left = Math.min(...axes.map((b) => b.x));
			const right = Math.max(...axes.map((b) => b.x + b.width));
			const top = Math.min(...axes.map((b) => b.y));
			const bottom = Math.max(...axes.map((b) => b.y + b.height));
			const pts = [...document.querySelectorAll('circle.point')];
			const inside = pts.filter((c) => {
				const x = c.cx.baseVal.value, y = c.cy.baseVal.value;
				return x >= left - 0.5 && x <= right + 0.5 && y >= top - 0.5 && y <= bottom + 0.5;
			}).length;
			return {
				points: pts.length,
				inside,
				values: pts.map((c) => [Number(c.dataset.x), Number(c.dataset.y)]),
				xlabel: document.querySelector('text.xlabel').textContent,
				ylabel: document.querySelector('text.ylabel').textContent,
				title: document.querySelector('text.title').textContent,
			};
		}));
		await page.screenshot({path: shot});
		out.errors = errors;
		return out;
	});
	return out;
});
