/*
 * recce's flamegraph viewer. Frames are the g elements of class frame, written
 * depth first: a frame's callees follow it, up to the next frame at its
 * depth or nearer the root. That order is all it takes to rebuild the
 * tree here. Hover shows a frame's details at the bottom; a click zooms
 * into it (its callers stay, drawn full width); "Search" or Ctrl-F
 * takes a regular expression and highlights the frames it matches;
 * opening the file with ?s=REGEX does the same. searchFrames(),
 * resetSearch(), zoom() and resetZoom() are globals that tests may call.
 */
'use strict';
/* @CONFIG@ */
const allFrames = []; /* in document order; window.frames is taken */
const frameOfGroup = new Map();
let details, matched, unzoomButton, searchButton;
let searching = false;

window.addEventListener('load', init);

function init() {
	details = document.getElementById('details');
	matched = document.getElementById('matched');
	unzoomButton = document.getElementById('unzoom');
	searchButton = document.getElementById('search');

	const stack = []; /* the current frame's ancestors */
	const groups = document.querySelectorAll('#frames > g.frame');
	for (let i = 0; i < groups.length; i++) {
		const g = groups[i];
		const rect = g.querySelector('rect');
		const y = parseFloat(rect.getAttribute('y'));
		const frame = {
			index: i,
			g: g,
			rect: rect,
			text: g.querySelector('text'),
			name: g.getAttribute('data-name'),
			value: Number(g.getAttribute('data-value')),
			loc: g.getAttribute('data-loc'),
			title: g.querySelector('title').textContent,
			x: parseFloat(rect.getAttribute('x')),
			width: parseFloat(rect.getAttribute('width')),
			fill: rect.getAttribute('fill'),
			level: config.icicle ? y : -y, /* grows away from the root */
			parent: null,
			end: groups.length, /* index after the last callee */
		};
		while (stack.length > 0 && stack[stack.length - 1].level >= frame.level)
			stack.pop().end = i;
		frame.parent = stack.length > 0 ? stack[stack.length - 1] : null;
		stack.push(frame);
		allFrames.push(frame);
		frameOfGroup.set(g, frame);
	}

	const container = document.getElementById('frames');
	container.addEventListener('mouseover', (e) => {
		const frame = frameOf(e.target);
		if (frame)
			showDetails(frame);
	});
	container.addEventListener('mouseout', (e) => {
		if (frameOf(e.target))
			details.textContent = ' ';
	});
	container.addEventListener('click', (e) => {
		const frame = frameOf(e.target);
		if (frame)
			zoom(frame);
	});
	unzoomButton.addEventListener('click', resetZoom);
	searchButton.addEventListener('click', () => {
		if (searching)
			resetSearch();
		else
			searchPrompt();
	});
	window.addEventListener('keydown', (e) => {
		if ((e.ctrlKey && (e.key === 'f' || e.key === 'F')) || e.key === 'F3') {
			e.preventDefault();
			searchPrompt();
		} else if (e.key === 'Escape') {
			resetSearch();
		}
	});

	/* flamegraph.pl's ?s=REGEX: open the file with a search done */
	const pattern = new URLSearchParams(window.location.search).get('s');
	if (pattern)
		searchFrames(pattern);
}

function frameOf(element) {
	const g = element.closest ? element.closest('g.frame') : null;
	return g ? frameOfGroup.get(g) : undefined;
}

function total() {
	return allFrames.length > 0 ? allFrames[0].value : 0;
}

function showDetails(frame) {
	details.textContent = 'Function: ' + frame.title + (frame.loc ? ' at ' + frame.loc : '');
}

/* The label that fits in width pixels; the SVG's writer uses the same rule. */
function fitText(name, width) {
	const chars = Array.from(name);
	const fit = Math.floor((width - 6) / (config.fontSize * config.fontWidth));
	if (fit < 3)
		return '';
	if (chars.length <= fit)
		return name;
	return chars.slice(0, fit - 2).join('') + '..';
}

function place(frame, x, width) {
	frame.rect.setAttribute('x', x.toFixed(2));
	frame.rect.setAttribute('width', width.toFixed(2));
	frame.text.setAttribute('x', (x + 3).toFixed(2));
	frame.text.textContent = fitText(frame.name, width);
}

/* The target becomes full width, its callees scale with it, its callers
   are drawn full width and faded, and every other frame is hidden. */
function zoom(target) {
	if (!target.parent) {
		resetZoom();
		return;
	}
	const scale = config.frameWidth / target.width;
	for (const frame of allFrames) {
		frame.g.classList.add('hide');
		frame.g.classList.remove('parent');
	}
	for (let a = target.parent; a; a = a.parent) {
		place(a, config.xpad, config.frameWidth);
		a.g.classList.remove('hide');
		a.g.classList.add('parent');
	}
	place(target, config.xpad, config.frameWidth);
	target.g.classList.remove('hide');
	for (let i = target.index + 1; i < target.end; i++) {
		const frame = allFrames[i];
		place(frame, config.xpad + (frame.x - target.x) * scale, frame.width * scale);
		frame.g.classList.remove('hide');
	}
	unzoomButton.classList.remove('hide');
}

function resetZoom() {
	for (const frame of allFrames) {
		place(frame, frame.x, frame.width);
		frame.g.classList.remove('hide', 'parent');
	}
	unzoomButton.classList.add('hide');
}

function searchPrompt() {
	const pattern = window.prompt('Search for (regular expression):', '');
	if (pattern)
		searchFrames(pattern);
}

/* Highlights the frames whose name matches pattern and shows the share
   of the total they cover, counting a match inside a match once.
   Returns that share in percent, or -1 for a bad pattern. */
function searchFrames(pattern) {
	let re;
	try {
		re = new RegExp(pattern);
	} catch (err) {
		details.textContent = 'bad regular expression: ' + err.message;
		return -1;
	}
	resetSearch();
	let covered = 0;
	let countedUntil = 0; /* frames before this index are inside a counted match */
	for (const frame of allFrames) {
		if (!re.test(frame.name))
			continue;
		frame.rect.setAttribute('fill', config.matchFill);
		frame.g.classList.add('match');
		if (frame.index >= countedUntil) {
			covered += frame.value;
			countedUntil = frame.end;
		}
	}
	const percent = total() > 0 ? (100 * covered) / total() : 0;
	matched.textContent = 'Matched: ' + percent.toFixed(2) + '%';
	searchButton.textContent = 'Reset Search';
	searching = true;
	return percent;
}

function resetSearch() {
	for (const frame of allFrames) {
		frame.rect.setAttribute('fill', frame.fill);
		frame.g.classList.remove('match');
	}
	matched.textContent = ' ';
	searchButton.textContent = 'Search';
	searching = false;
}
