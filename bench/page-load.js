// bench/page-load.js: the fleet page's load time in headless Chromium,
// for bench/fleet-store.sh, where curl times only the answers. A load of
// the whole fleet runs from the navigation's start to the first frame
// painted after the page has drawn its chart, flamegraph and top table
// (drawn_s), and to its pickers of hosts and cgroups filled, which it
// asks for after (loaded_s); a load of one host from its pick in the
// host picker to the frame painted after it is drawn (host_s). Each in
// a fresh browser, best of three. Prints one JSON object: {"drawn_s":
// S, "loaded_s": S, "host_s": S, "frames": N} (the flamegraph's frames
// drawn for the fleet).
//
//     node bench/page-load.js URL
'use strict';
const {withPage, report} = require('../tests/js/browser.js');

// The page's clock when the frame after the last change is painted.
const painted = (page) =>
    page.evaluate(() => new Promise((done) => requestAnimationFrame(
					() => setTimeout(() => done(performance.now()), 0))));

const mark = (page, what, n) =>
    page.waitForSelector('body[data-' + what + '="' + n + '"]', {timeout : 120000});

report(async () => {
	const url = process.argv[2];
	const drawn = [], loaded = [], host = [];
	let frames = 0;
	for (let i = 0; i < 3; i++) {
		await withPage(url, {width : 1100, height : 900}, async (page) => {
			await mark(page, 'drawn', 1);
			drawn.push(await painted(page) / 1000);
			await mark(page, 'loaded', 1);
			loaded.push(await painted(page) / 1000);
			frames = await page.locator('#flame div').count();
			const hosts =
			    await page.$$eval('#host option', (os) => os.map((o) => o.value));
			if (hosts.length < 2)
				throw new Error('the page lists no host to pick');
			const t0 = await page.evaluate(() => performance.now());
			await page.selectOption('#host', hosts[1]);
			await mark(page, 'drawn', 2);
			host.push((await painted(page) - t0) / 1000);
		});
	}
	const best = (v) => Math.min(...v);
	return {drawn_s : best(drawn), loaded_s : best(loaded), host_s : best(host), frames};
});
