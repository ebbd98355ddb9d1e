/**
 * The types of Firecrawl's own fields: those that steer the translation to sift's fields instead of
 * becoming one (a format list, `onlyMainContent`, `maxAge` in ms, path patterns). They are checked
 * through the same pipe as sift's commands before the translation reads them, so `"false"` is not
 * taken for true nor `fullPage: "yes"` for a viewport screenshot. Every rule of sift's (lengths,
 * counts, ranges) is the DTO's, applied to the translated body (firecrawl-body.ts); none is here.
 */
import { Type } from 'class-transformer';
import {
  IsArray,
  IsBoolean,
  IsNumber,
  IsObject,
  IsOptional,
  IsString,
  registerDecorator,
  ValidateNested,
  type ValidationArguments,
} from 'class-validator';
import { commandOf } from '../../commands';

type Body = Record<string, unknown>;

const isPlain = (v: unknown): v is Body => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The screenshot format's documented options, and what each must be. */
const SCREENSHOT_OPTIONS: Record<string, [(v: unknown) => boolean, string]> = {
  fullPage: [(v) => typeof v === 'boolean', 'must be a boolean value'],
  quality: [(v) => typeof v === 'number', 'must be a number'],
  viewport: [
    (v) => isPlain(v) && typeof v.width === 'number' && typeof v.height === 'number',
    'must be an object of numbers width and height',
  ],
};

/** Why `formats` is not a list of format names and `{type, ...}` objects, or undefined. */
function formatsProblem(formats: unknown): string | undefined {
  if (!Array.isArray(formats)) return 'formats must be a list';
  for (const [i, f] of (formats as unknown[]).entries()) {
    if (typeof f === 'string') continue;
    if (!isPlain(f) || typeof f.type !== 'string')
      return `formats.${i} must be a format's name or an object with a string type`;
    if (f.type !== 'screenshot') continue;
    for (const [key, [ok, must]] of Object.entries(SCREENSHOT_OPTIONS)) {
      if (f[key] !== undefined && !ok(f[key])) return `formats.${i}.${key} ${must}`;
    }
  }
  return undefined;
}

function IsFirecrawlFormats(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isFirecrawlFormats',
      target: target.constructor,
      propertyName: propertyName as string,
      options: { message: (args: ValidationArguments) => formatsProblem(args.value) ?? '' },
      validator: { validate: (v: unknown) => formatsProblem(v) === undefined },
    });
}

class ScrapeFields {
  @IsOptional()
  @IsBoolean()
  onlyMainContent?: boolean;

  @IsOptional()
  @IsFirecrawlFormats()
  formats?: unknown[];

  @IsOptional()
  @IsNumber()
  maxAge?: number;
}

class CrawlFields {
  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  includePaths?: string[];

  @IsOptional()
  @IsArray()
  @IsString({ each: true })
  excludePaths?: string[];

  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => ScrapeFields)
  scrapeOptions?: ScrapeFields;

  @IsOptional()
  @IsBoolean()
  crawlEntireDomain?: boolean;
}

class MapFields {
  @IsOptional()
  @IsBoolean()
  ignoreQueryParameters?: boolean;
}

const SCRAPE = ['onlyMainContent', 'formats', 'maxAge'];

/** Only the fields checked here: the others are sift's, or refused by name (firecrawl-mapping.ts). */
function pick(body: Body, keys: string[]): Body {
  return Object.fromEntries(keys.filter((k) => body[k] !== undefined).map((k) => [k, body[k]]));
}

/** A scrape's (or a batch scrape's) own fields; a 400 naming the field otherwise. */
export async function checkScrapeFields(body: Body): Promise<void> {
  await commandOf(ScrapeFields, pick(body, SCRAPE));
}

/** A crawl's own fields, its scrapeOptions' included. */
export async function checkCrawlFields(body: Body): Promise<void> {
  const fields = pick(body, ['includePaths', 'excludePaths', 'scrapeOptions', 'crawlEntireDomain']);
  if (isPlain(fields.scrapeOptions)) fields.scrapeOptions = pick(fields.scrapeOptions, SCRAPE);
  await commandOf(CrawlFields, fields);
}

/** A map's own fields. */
export async function checkMapFields(body: Body): Promise<void> {
  await commandOf(MapFields, pick(body, ['ignoreQueryParameters']));
}
