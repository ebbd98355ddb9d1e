import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { HealthResponseDto } from './dto/responses.dto';

@ApiTags('operations')
@Controller()
export class HealthController {
  /** Liveness: 200 while the process serves requests. */
  @Get('healthz')
  @ApiOkResponse({ type: HealthResponseDto })
  healthz(): { ok: true } {
    return { ok: true };
  }
}
