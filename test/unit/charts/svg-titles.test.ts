import { withTitles } from '../../../tools/charts/svg-titles';

test('an element Vega gave an aria-label gets it as a <title> (the tooltip of a static SVG)', () => {
  expect(withTitles('<g><path aria-label="paused by loop" d="M0,0"/></g>')).toBe(
    '<g><path aria-label="paused by loop" d="M0,0"><title>paused by loop</title></path></g>',
  );
  expect(withTitles('<text aria-label="a &amp; b&#xA;c" fill="red">a…</text>')).toBe(
    '<text aria-label="a &amp; b&#xA;c" fill="red"><title>a &amp; b&#xA;c</title>a…</text>',
  );
});

test('elements without one, and groups (axes, legends), are left as they are', () => {
  const svg = '<g class="mark-group role-axis" aria-label="X-axis"><line x2="5"/><text>10:00</text></g>';
  expect(withTitles(svg)).toBe(svg);
});
