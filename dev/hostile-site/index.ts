/** The hostile test site: virtual hosts that turn hostile, labelled forward proxies, and the two together. */
export * from './modes';
export * from './access-log';
export { THEMES, type Theme, type PageType } from './catalogue';
export * from './site';
export * from './proxy';
export * from './world';
