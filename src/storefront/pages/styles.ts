/**
 * The pages' one style sheet, inlined by the layout and allowed by its hash. Each area keeps its rules in a file of
 * its own (the shop's pages, the cart and checkout, the approval and order pages); the layout's are here.
 * Colours keep a contrast ratio of at least 7:1 against their background (4.5:1 at the least for muted text);
 * widths work from 320 px up.
 */
import { APPROVAL_STYLE } from './approval-style.js';
import { CART_STYLE } from './cart-style.js';
import { SHOP_STYLE } from './shop-style.js';

const BASE_STYLE = [
  '*,*::before,*::after{box-sizing:border-box}',
  'html{-webkit-text-size-adjust:100%;text-size-adjust:100%}',
  'body{margin:0;background:#fff;color:#1a1a1a;font:1rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;overflow-wrap:break-word}',
  '.skip-link{position:absolute;left:-999px;top:0;background:#fff;padding:.5rem 1rem;z-index:10}',
  '.skip-link:focus{left:0}',
  '.visually-hidden{position:absolute!important;width:1px;height:1px;padding:0;margin:-1px;overflow:hidden;clip:rect(0,0,0,0);white-space:nowrap;border:0}',
  '.site{border-bottom:1px solid #d0d0d0;padding:.75rem 1rem;display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1.5rem}',
  '.site .store-name{margin:0;font-weight:700;font-size:1.125rem}',
  '.site .store-name a{color:#1a1a1a;text-decoration:none}',
  '.shop-nav{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1.25rem;flex:1 1 auto;justify-content:flex-end}',
  '.shop-nav ul{list-style:none;display:flex;gap:1.25rem;margin:0;padding:0}',
  '.site-search{display:flex;gap:.25rem}',
  '.site-search input{font:inherit;padding:.375rem .5rem;border:2px solid #404040;border-radius:.375rem;width:12rem;max-width:50vw}',
  'button.search-button{flex:none;min-height:2.5rem;padding:.375rem .75rem;background:#fff;color:#0b3d91;border:2px solid #0b3d91}',
  'main{max-width:44rem;margin:0 auto;padding:1rem}',
  'main.wide{max-width:72rem}',
  'h1{font-size:1.5rem;line-height:1.25;margin:.5rem 0 1rem}',
  'h2{font-size:1.125rem;margin:1.5rem 0 .5rem}',
  'a{color:#0b3d91}',
  'a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible{outline:3px solid #0b3d91;outline-offset:2px}',
  'img{max-width:100%;height:auto}',
  'table{width:100%;border-collapse:collapse;margin:.5rem 0}',
  'caption{text-align:left;font-weight:700;padding:.25rem 0}',
  'th,td{padding:.5rem .25rem;border-bottom:1px solid #d0d0d0;text-align:left;vertical-align:top}',
  'td.n,th.n{text-align:right;white-space:nowrap}',
  '@media (max-width:24rem){table{font-size:.875rem}th,td{padding:.5rem .125rem}}',
  '.variant,.detail{display:block;color:#404040;font-size:.875rem}',
  'dl.totals{display:grid;grid-template-columns:1fr auto;gap:.25rem 1rem;margin:.5rem 0}',
  'dl.totals dt{margin:0}',
  'dl.totals dd{margin:0;text-align:right;white-space:nowrap}',
  'dl.totals .grand{font-weight:700;font-size:1.125rem}',
  'address{font-style:normal}',
  '.notice{border-left:4px solid #0b3d91;background:#eef3fb;padding:.75rem 1rem;margin:1rem 0}',
  '.problem{border-left:4px solid #8a1c1c;background:#fbeeee;padding:.75rem 1rem;margin:1rem 0}',
  '.actions{display:flex;flex-wrap:wrap;gap:.75rem;margin:1.5rem 0}',
  'button{font:inherit;font-weight:700;min-height:2.75rem;padding:.625rem 1.25rem;border-radius:.375rem;cursor:pointer;flex:1 1 12rem}',
  'button.approve{background:#14532d;color:#fff;border:2px solid #14532d}',
  'button.decline{background:#fff;color:#8a1c1c;border:2px solid #8a1c1c}',
  'button.secondary{background:#fff;color:#0b3d91;border:2px solid #0b3d91}',
  'button:disabled{opacity:.6;cursor:default}',
  'label{display:block;font-weight:700;margin:.5rem 0 .25rem}',
  'input.code{font:inherit;font-size:1.5rem;letter-spacing:.3em;width:10ch;padding:.375rem .5rem;border:2px solid #404040;border-radius:.375rem}',
  '.proof{border:1px solid #d0d0d0;border-radius:.5rem;padding:.25rem 1rem 1rem;margin:1.5rem 0}',
  '[hidden]{display:none!important}',
  'footer{border-top:1px solid #d0d0d0;margin-top:2rem;padding:1rem}',
  'footer .contact{max-width:44rem;margin:0 auto .5rem}',
  'footer ul{list-style:none;margin:0 auto;padding:0;max-width:44rem;display:flex;flex-wrap:wrap;gap:.5rem 1.25rem}',
];

export const PAGE_STYLE = [...BASE_STYLE, ...SHOP_STYLE, ...CART_STYLE, ...APPROVAL_STYLE].join('');
