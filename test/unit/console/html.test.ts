import { escapeHtml, markup, SafeHtml, trustedHtml } from '../../../client/console/html';

test('escapeHtml turns the five special characters into entities', () => {
  expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
    '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
  );
  expect(escapeHtml('shop.example.com')).toBe('shop.example.com');
});

test('markup escapes every interpolated text, in text and in attributes', () => {
  const site = '<script>alert(1)</script>';
  const reason = `" onmouseover="alert(1)`;
  expect(markup`<td title="${reason}">${site}</td>`.text).toBe(
    '<td title="&quot; onmouseover=&quot;alert(1)">&lt;script&gt;alert(1)&lt;/script&gt;</td>',
  );
});

test('markup inserts fragments as they are, lists joined, and nothing for null, undefined or false', () => {
  const rows = ['a<b', 'c'].map((s) => markup`<li>${s}</li>`);
  const list = markup`<ul>${rows}</ul>`;
  expect(list.text).toBe('<ul><li>a&lt;b</li><li>c</li></ul>');
  expect(markup`${null}${undefined}${false}${0}`.text).toBe('0');
  expect(markup`${trustedHtml('<b>x</b>')}`.text).toBe('<b>x</b>');
  expect(markup`x` instanceof SafeHtml).toBe(true);
});

test('a string that looks like markup is still escaped: only SafeHtml passes unescaped', () => {
  const bold = '<b>x</b>';
  expect(markup`${bold}`.text).toBe('&lt;b&gt;x&lt;/b&gt;');
  expect(markup`${[bold, markup`<i>${bold}</i>`]}`.text).toBe('&lt;b&gt;x&lt;/b&gt;<i>&lt;b&gt;x&lt;/b&gt;</i>');
});
