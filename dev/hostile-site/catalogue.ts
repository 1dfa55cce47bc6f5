/**
 * The normal pages of one host: a small, bounded catalogue a crawler can walk and walk again — a home
 * page, listing pages `/list/1…L` of 20 items each, item pages `/item/1…N` with a title, a price and
 * product markup, and `/robots.txt`. Every page is generated from (host, path) alone, so the same URL
 * always serves the same bytes.
 *
 * Pages are 10–16 KB on purpose: larger than the classifier's `shortPageBytes` (8 KB), because they carry
 * the scripts protected sites put on every normal page (Cloudflare's jsd, DataDome's tags, PerimeterX's
 * sensor, reCAPTCHA v3 on item pages) — weak markers that must not turn a normal page into a challenge.
 * A crawler extracts items with `article.product` (`data-id`, `.name`, `.price[data-price]`).
 */
import { hashText, mixSeed, Rng } from '../../core/scenarios/rng';
import type { Protection } from './modes';

export type PageType = 'home' | 'listing' | 'product' | 'robots';

export interface Theme {
  siteName: string;
  /** What an item is, for headings ("Hotels", "Products"). */
  itemsName: string;
  currency: string;
  /** Price range of an item, in whole currency units. */
  price: readonly [number, number];
  firstNames: readonly string[];
  lastNames: readonly string[];
  categories: readonly string[];
  words: readonly string[];
}

const COMMON_WORDS = [
  'reliable',
  'lightweight',
  'popular',
  'classic',
  'new',
  'limited',
  'durable',
  'compact',
  'comfortable',
  'recommended',
  'quality',
  'season',
  'design',
  'value',
  'customers',
  'delivery',
  'returns',
  'guarantee',
  'materials',
  'choice',
];

/** Built-in themes; a host picks one by name (`shop`, `news`, `travel`, `books`). */
export const THEMES: Readonly<Record<string, Theme>> = {
  shop: {
    siteName: 'Northwind Outdoor',
    itemsName: 'Products',
    currency: 'EUR',
    price: [19, 480],
    firstNames: [
      'Trailrunner',
      'Summit',
      'Alpine',
      'Ridge',
      'Basecamp',
      'Storm',
      'Glacier',
      'Canyon',
      'Timberline',
      'Fjord',
    ],
    lastNames: [
      'GTX Shoe',
      '45 Backpack',
      'Down Jacket',
      'Trekking Poles',
      '2P Tent',
      'Shell Pants',
      'Headlamp',
      'Sleeping Bag',
      'Merino Tee',
      'Crampons',
    ],
    categories: ['Running shoes', 'Backpacks', 'Jackets', 'Tents', 'Climbing', 'Sale'],
    words: ['waterproof', 'breathable', 'trail', 'grip', 'insulation', 'seams', 'zip', 'weight', 'pack', 'outsole'],
  },
  news: {
    siteName: 'The Daily Ledger',
    itemsName: 'Reports',
    currency: 'USD',
    price: [1, 9],
    firstNames: [
      'Markets',
      'Energy',
      'Housing',
      'Transport',
      'Climate',
      'Trade',
      'Labour',
      'Health',
      'Science',
      'Budget',
    ],
    lastNames: [
      'outlook for the quarter',
      'report from the council',
      'in five charts',
      'after the vote',
      'explained',
      'under pressure',
      'by the numbers',
      'the week ahead',
      'special report',
      'analysis',
    ],
    categories: ['Business', 'Politics', 'Science', 'Opinion', 'World', 'Archive'],
    words: [
      'analysts',
      'figures',
      'minister',
      'statement',
      'quarter',
      'growth',
      'council',
      'sources',
      'survey',
      'policy',
    ],
  },
  travel: {
    siteName: 'Wayfarer Stays',
    itemsName: 'Hotels',
    currency: 'EUR',
    price: [48, 690],
    firstNames: [
      'Harbour',
      'Old Town',
      'Riverside',
      'Grand',
      'Garden',
      'Station',
      'Lakeside',
      'Hilltop',
      'Cathedral',
      'Market',
    ],
    lastNames: [
      'Hotel Lisbon',
      'Inn Porto',
      'Suites Seville',
      'Lodge Bergen',
      'Residence Prague',
      'Hotel Ghent',
      'Rooms Lyon',
      'House Turin',
      'Hostel Split',
      'Hotel Graz',
    ],
    categories: ['City breaks', 'Seaside', 'Mountains', 'Family', 'Last minute', 'Deals'],
    words: [
      'breakfast',
      'room',
      'view',
      'check-in',
      'reception',
      'walk',
      'centre',
      'terrace',
      'guests',
      'cancellation',
    ],
  },
  books: {
    siteName: 'Quiet Pages Bookshop',
    itemsName: 'Books',
    currency: 'GBP',
    price: [6, 45],
    firstNames: [
      'The Long',
      'A Quiet',
      'The Last',
      'Winter',
      'The Glass',
      'Northern',
      'The Paper',
      'Small',
      'The Salt',
      'Evening',
    ],
    lastNames: ['Harbour', 'Garden', 'Orchard', 'Letters', 'Lighthouse', 'Road', 'Atlas', 'Kingdom', 'River', 'Hours'],
    categories: ['Fiction', 'History', 'Poetry', 'Travel', 'Children', 'Gifts'],
    words: [
      'novel',
      'chapter',
      'author',
      'edition',
      'paperback',
      'story',
      'reader',
      'prize',
      'translation',
      'hardback',
    ],
  },
};

/** Scripts protection vendors put on every normal page (the classic false-positive bait). */
const BAIT: Readonly<Record<Protection, string>> = {
  cloudflare:
    "<script>(function(){var a=document.createElement('script');a.src='/cdn-cgi/challenge-platform/scripts/jsd/" +
    "main.js';document.getElementsByTagName('head')[0].appendChild(a);})();</script>",
  datadome:
    '<script>window.ddjskey = "9A1B2C3D4E5F60718293A4B5C6D7E8"; window.ddoptions = {};</script><script ' +
    'src="https://js.datadome.co/tags.js" async></script>',
  perimeterx: '<script>window._pxAppId = \'PXq7w8e9r0\';</script><script src="/q7w8e9r0/init.js" async></script>',
  akamai: '<script type="text/javascript" src="/akam/13/5f2e9c1d" defer></script>',
  none: '',
};

/** The `server` header each protection answers with. */
export const SERVER_HEADER: Readonly<Record<Protection, string>> = {
  cloudflare: 'cloudflare',
  datadome: 'nginx',
  perimeterx: 'nginx',
  akamai: 'AkamaiGHost',
  none: 'nginx',
};

export interface CatalogueOptions {
  host: string;
  theme: Theme;
  protection: Protection;
  /** Item pages /item/1…items. */
  items: number;
  perPage: number;
}

export interface Page {
  status: number;
  pageType: PageType | undefined;
  headers: Record<string, string>;
  body: string;
}

export interface Item {
  id: number;
  name: string;
  price: string;
  category: string;
}

const escapeHtml = (text: string): string =>
  text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

export function listingPages(options: CatalogueOptions): number {
  return Math.max(1, Math.ceil(options.items / options.perPage));
}

/** Item `id` of the catalogue (same for every call). */
export function itemOf(options: CatalogueOptions, id: number): Item {
  const rng = new Rng(mixSeed(hashText(options.host), id));
  const { theme } = options;
  const name = `${rng.pick(theme.firstNames)} ${rng.pick(theme.lastNames)} ${id}`;
  const cents = rng.int(theme.price[0] * 100, theme.price[1] * 100);
  return { id, name, price: (cents / 100).toFixed(2), category: rng.pick(theme.categories) };
}

function sentence(rng: Rng, theme: Theme): string {
  const words: string[] = [];
  const length = rng.int(9, 16);
  for (let i = 0; i < length; i++) words.push(rng.chance(0.5) ? rng.pick(theme.words) : rng.pick(COMMON_WORDS));
  const text = words.join(' ');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

function paragraph(rng: Rng, theme: Theme, sentences: number): string {
  const out: string[] = [];
  for (let i = 0; i < sentences; i++) out.push(sentence(rng, theme));
  return `<p>${out.join(' ')}</p>`;
}

function head(options: CatalogueOptions, title: string, path: string, extra: string): string {
  return (
    `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" ` +
    `content="width=device-width, initial-scale=1">` +
    (`<title>${escapeHtml(title)}</title><link rel="canonical" href="http://${options.host}${path}"><link ` +
      `rel="stylesheet" href="/static/css/app.3f9a1c.css">`) +
    `${extra}${BAIT[options.protection]}</head>`
  );
}

function header(options: CatalogueOptions): string {
  const pages = listingPages(options);
  const nav = options.theme.categories
    .map((c, i) => `<a href="/list/${(i % pages) + 1}">${escapeHtml(c)}</a>`)
    .join(' ');
  return (
    `<header class="site-header"><a class="logo" href="/">${escapeHtml(options.theme.siteName)}</a><nav ` +
    `class="categories">${nav}</nav>` +
    (`<form class="search" action="/search"><input name="q" placeholder="Search ` +
      `${options.theme.itemsName.toLowerCase()}"></form><span class="account">Sign in</span></header>`)
  );
}

function footer(options: CatalogueOptions, rng: Rng): string {
  const links = [
    'About us',
    'Careers',
    'Press',
    'Help centre',
    'Delivery',
    'Returns',
    'Privacy',
    'Cookies',
    'Terms',
    'Contact',
  ];
  return (
    `<footer class="site-footer"><div class="newsletter"><h3>Stay in touch</h3>${paragraph(rng, options.theme, 3)}` +
    (`<form action="/newsletter" method="post"><input type="email" name="email" placeholder="Your ` +
      `e-mail"><button>Subscribe</button></form></div>`) +
    // Plain text, not links: a crawl following every link stays inside the catalogue (no 404s to judge).
    `<ul class="links">${links.map((l) => `<li><span class="link">${l}</span></li>`).join('')}</ul>` +
    `<p class="legal">© 2025 ${escapeHtml(options.theme.siteName)}. All prices include VAT.</p></footer>`
  );
}

function card(options: CatalogueOptions, item: Item, rng: Rng): string {
  return (
    `<article class="product" data-id="${item.id}"><a class="link" href="/item/${item.id}"><img ` +
    `src="/img/${item.id}.jpg" alt="${escapeHtml(item.name)}" width="240" height="180">` +
    (`<h3 class="name">${escapeHtml(item.name)}</h3></a><span class="price" data-price="${item.price}" ` +
      `data-currency="${options.theme.currency}">${options.theme.currency} ${item.price}</span>`) +
    (`<span class="category">${escapeHtml(item.category)}</span><p ` +
      `class="blurb">${sentence(rng, options.theme)}</p></article>`)
  );
}

function html(status: number, pageType: PageType, options: CatalogueOptions, body: string): Page {
  return {
    status,
    pageType,
    headers: { 'content-type': 'text/html; charset=utf-8', server: SERVER_HEADER[options.protection] },
    body,
  };
}

function homePage(options: CatalogueOptions): Page {
  const rng = new Rng(mixSeed(hashText(options.host), 0x484f4d45));
  const pages = listingPages(options);
  const featured: string[] = [];
  for (let i = 0; i < 12; i++) featured.push(card(options, itemOf(options, rng.int(1, options.items)), rng));
  const lists = Array.from(
    { length: pages },
    (_, i) => `<li><a href="/list/${i + 1}">${options.theme.itemsName} — page ${i + 1}</a></li>`,
  ).join('');
  const body =
    head(options, `${options.theme.siteName} — ${options.theme.itemsName}`, '/', '') +
    (`<body class="home">${header(options)}<main><section ` +
      `class="hero"><h1>${escapeHtml(options.theme.siteName)}</h1>${paragraph(rng, options.theme, 4)}</section>`) +
    (`<section class="featured"><h2>Featured ` +
      `${options.theme.itemsName.toLowerCase()}</h2>${featured.join('')}</section>`) +
    (`<section class="all"><h2>All ${options.theme.itemsName.toLowerCase()}</h2><ul>${lists}</ul></section></mai` +
      `n>${footer(options, rng)}</body></html>`);
  return html(200, 'home', options, body);
}

/** Listing page `n`; `empty` serves the same layout without a single item (a soft block by emptiness). */
export function listingPage(options: CatalogueOptions, n: number, empty = false): Page {
  const rng = new Rng(mixSeed(hashText(options.host), 0x4c495354, n));
  const pages = listingPages(options);
  const first = (n - 1) * options.perPage + 1;
  const last = Math.min(options.items, n * options.perPage);
  const cards: string[] = [];
  if (!empty) for (let id = first; id <= last; id++) cards.push(card(options, itemOf(options, id), rng));
  const pager =
    `<nav class="pagination">${n > 1 ? `<a rel="prev" href="/list/${n - 1}">Previous</a>` : ''}` +
    Array.from({ length: pages }, (_, i) =>
      i + 1 === n ? `<span class="current">${n}</span>` : `<a href="/list/${i + 1}">${i + 1}</a>`,
    ).join(' ') +
    `${n < pages ? `<a rel="next" href="/list/${n + 1}">Next</a>` : ''}</nav>`;
  // Without its items the page keeps its usual size (editorial text fills it), so only an empty
  // extraction can tell — not the size norm, and not a weak marker corroborated by a short page.
  const filler = empty
    ? `<p class="empty">No ${options.theme.itemsName.toLowerCase()} match your selection.</p><section ` +
      `class="editorial"><h2>Why shop with us</h2>` +
      Array.from({ length: 12 }, () => paragraph(rng, options.theme, 8)).join('') +
      '</section>'
    : '';
  const filters = options.theme.categories
    .map((c) => `<label><input type="checkbox" name="c" value="${escapeHtml(c)}"> ${escapeHtml(c)}</label>`)
    .join('');
  const body =
    head(options, `${options.theme.itemsName} – page ${n} | ${options.theme.siteName}`, `/list/${n}`, '') +
    (`<body class="listing">${header(options)}<main><h1>${options.theme.itemsName} <small>page ${n} of ` +
      `${pages}</small></h1>`) +
    `<aside class="filters"><h2>Filter</h2>${filters}${paragraph(rng, options.theme, 3)}</aside>` +
    (`<section class="results" data-count="${cards.length}">${cards.join('')}${filler}</section>${pager}</main>` +
      `${footer(options, rng)}</body></html>`);
  return html(200, 'listing', options, body);
}

function itemPage(options: CatalogueOptions, id: number): Page {
  const item = itemOf(options, id);
  const rng = new Rng(mixSeed(hashText(options.host), 0x4954454d, id));
  const { theme } = options;
  const jsonLd = JSON.stringify({
    '@context': 'https://schema.org',
    '@type': 'Product',
    name: item.name,
    sku: `SKU-${id}`,
    offers: {
      '@type': 'Offer',
      price: item.price,
      priceCurrency: theme.currency,
      availability: 'https://schema.org/InStock',
    },
  });
  const specs = Array.from(
    { length: 10 },
    () => `<tr><th>${rng.pick(theme.words)}</th><td>${rng.pick(COMMON_WORDS)} ${rng.int(1, 99)}</td></tr>`,
  ).join('');
  const reviews = Array.from(
    { length: 5 },
    (_, i) =>
      `<li class="review"><span class="stars" data-stars="${rng.int(3, 5)}"></span><strong>Customer ` +
      `${i + 1}</strong>${paragraph(rng, theme, 2)}</li>`,
  ).join('');
  const related: string[] = [];
  for (let i = 0; i < 6; i++) related.push(card(options, itemOf(options, rng.int(1, options.items)), rng));
  const listN = Math.floor((id - 1) / options.perPage) + 1;
  // reCAPTCHA v3 runs invisibly on item pages of many shops: weak evidence that must stay `ok` here.
  const recaptcha =
    '<script src="https://www.google.com/recaptcha/api.js?render=6LcQexampleHostileSiteKeyAA" async defer></script>';
  const body =
    head(
      options,
      `${item.name} | ${theme.siteName}`,
      `/item/${id}`,
      `<script type="application/ld+json">${jsonLd}</script>${recaptcha}`,
    ) +
    (`<body class="product-page">${header(options)}<main><nav class="breadcrumbs"><a href="/">Home</a> › <a ` +
      `href="/list/${listN}">${escapeHtml(item.category)}</a></nav>`) +
    `<article class="product" data-id="${id}"><h1 class="name">${escapeHtml(item.name)}</h1>` +
    `<img src="/img/${id}-large.jpg" alt="${escapeHtml(item.name)}" width="640" height="480">` +
    (`<span class="price" data-price="${item.price}" data-currency="${theme.currency}">${theme.currency} ` +
      `${item.price}</span><span class="availability">In stock</span>`) +
    (`<form action="/basket" method="post"><input type="hidden" name="sku" value="SKU-${id}"><button>Add to ` +
      `basket</button></form>`) +
    (`<section class="description"><h2>Description</h2>${paragraph(rng, theme, 5)}${paragraph(rng, theme, 5)}</s` +
      `ection>`) +
    `<section class="specs"><h2>Details</h2><table>${specs}</table></section>` +
    `<section class="reviews"><h2>Reviews</h2><ul>${reviews}</ul></section></article>` +
    (`<section class="related"><h2>You may also ` +
      `like</h2>${related.join('')}</section></main>${footer(options, rng)}</body></html>`);
  return html(200, 'product', options, body);
}

function notFoundPage(options: CatalogueOptions, path: string): Page {
  const body =
    head(options, `Page not found | ${options.theme.siteName}`, path, '') +
    (`<body class="not-found">${header(options)}<main><h1>We can't find that page</h1><p>${escapeHtml(path)} ` +
      `may have moved.</p><a href="/">Back to the start</a></main></body></html>`);
  return {
    status: 404,
    pageType: undefined,
    headers: { 'content-type': 'text/html; charset=utf-8', server: SERVER_HEADER[options.protection] },
    body,
  };
}

const ROBOTS = 'User-agent: *\nDisallow: /basket\nDisallow: /account\nAllow: /\n';

/** Parses `/list/N` and `/item/N` (N a positive integer without leading zeros). */
function numbered(path: string, prefix: string): number | undefined {
  if (!path.startsWith(prefix)) return undefined;
  const rest = path.slice(prefix.length);
  return /^[1-9][0-9]{0,6}$/.test(rest) ? Number(rest) : undefined;
}

/** The page type a path would be, without rendering it (for hostile answers and the access log). */
export function pageTypeOf(options: CatalogueOptions, path: string): PageType | undefined {
  if (path === '/') return 'home';
  if (path === '/robots.txt') return 'robots';
  const list = numbered(path, '/list/');
  if (list !== undefined && list <= listingPages(options)) return 'listing';
  const item = numbered(path, '/item/');
  if (item !== undefined && item <= options.items) return 'product';
  return undefined;
}

/** The normal answer to `path` (query string removed): a page, robots.txt, or a 404 page. */
export function renderCatalogue(options: CatalogueOptions, path: string): Page {
  switch (pageTypeOf(options, path)) {
    case 'home':
      return homePage(options);
    case 'robots':
      return {
        status: 200,
        pageType: 'robots',
        headers: { 'content-type': 'text/plain; charset=utf-8', server: SERVER_HEADER[options.protection] },
        body: ROBOTS,
      };
    case 'listing':
      return listingPage(options, numbered(path, '/list/') ?? 1);
    case 'product':
      return itemPage(options, numbered(path, '/item/') ?? 1);
    case undefined:
      return notFoundPage(options, path);
  }
}
