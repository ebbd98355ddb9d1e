import { Controller, Get, Res } from '@nestjs/common';
import { ApiOkResponse, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Dcache } from '../dcache';
import { InstanceService } from '../cluster/instance.service';
import { Renderer } from '../render/renderer';
import { HealthResponseDto } from './dto/responses.dto';

@ApiTags('operations')
@Controller()
export class HealthController {
  constructor(
    private readonly instance: InstanceService,
    private readonly dcache: Dcache,
    private readonly renderer: Renderer,
  ) {}

  /**
   * Liveness and readiness: 200 while the process serves requests and its database answers, with
   * the backend and this instance; 503 (ok false) while the database cannot be reached.
   */
  @Get('healthz')
  @ApiOkResponse({ type: HealthResponseDto })
  @ApiServiceUnavailableResponse({ type: HealthResponseDto, description: 'The database cannot be reached.' })
  healthz(@Res({ passthrough: true }) res: Response): HealthResponseDto {
    const reachable = this.dcache.reachable;
    if (!reachable) res.status(503);
    return {
      ok: reachable,
      backend: this.instance.backend,
      instance: this.instance.id,
      database: reachable ? 'reachable' : 'unreachable',
      render: this.renderer.available,
    };
  }
}
