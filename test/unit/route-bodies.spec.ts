import 'reflect-metadata';
import { Body, Controller, Post } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { BatchController } from '../../src/api/batch.controller';
import { BODY_RULE, BodyLimit, JOB_BODY, SMALL_BODY, type BodyRule } from '../../src/api/body-limit';
import { CrawlController } from '../../src/api/crawl.controller';
import { FetchController } from '../../src/api/fetch.controller';
import { FirecrawlController } from '../../src/api/firecrawl/firecrawl.controller';

type Ctor = new (...args: never[]) => object;

/** The methods of a controller that take a @Body(), each with the body rule it declares (if any). */
function bodyRoutes(controller: Ctor): { name: string; rule?: BodyRule }[] {
  const proto = controller.prototype as Record<string, unknown>;
  return Object.getOwnPropertyNames(proto)
    .filter((name) => name !== 'constructor')
    .filter((name) => {
      const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, name) ?? {}) as Record<
        string,
        unknown
      >;
      return Object.keys(args).some((k) => Number(k.split(':')[0]) === RouteParamtypes.BODY);
    })
    .map((name) => ({
      name,
      rule: Reflect.getMetadata(BODY_RULE, proto[name] as object) as BodyRule | undefined,
    }));
}

describe('every route declares the body it reads', () => {
  it('each route with a @Body() carries its limit per caller class (BodyLimit)', () => {
    const routes = [BatchController, CrawlController, FetchController, FirecrawlController].flatMap((c) =>
      bodyRoutes(c as unknown as Ctor).map((r) => ({ ...r, name: `${c.name}.${r.name}` })),
    );
    expect(routes.length).toBeGreaterThanOrEqual(9);
    expect(routes.filter((r) => !r.rule).map((r) => r.name)).toEqual([]);
    // A job's list of targets is the one large body; POST /v1/batch counts its targets first.
    const batch = routes.find((r) => r.name === 'BatchController.submitBatch');
    expect(batch?.rule).toEqual({ limits: JOB_BODY, countsTargets: true });
    expect(routes.find((r) => r.name === 'FetchController.fetch')?.rule).toEqual({ limits: SMALL_BODY });
  });

  it('a route that takes a body without declaring it is found', () => {
    @Controller('x')
    class Declared {
      @BodyLimit(SMALL_BODY)
      @Post('a')
      a(@Body() body: unknown) {
        return body;
      }

      @Post('b')
      b(@Body() body: unknown) {
        return body;
      }
    }
    expect(bodyRoutes(Declared).map((r) => [r.name, r.rule !== undefined])).toEqual([
      ['a', true],
      ['b', false],
    ]);
  });
});
