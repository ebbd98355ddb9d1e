import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiTags } from '@nestjs/swagger';
import { InstanceService } from '../runner/instance.service';
import { HealthResponseDto } from './dto/responses.dto';

@ApiTags('operations')
@Controller()
export class HealthController {
  constructor(private readonly instance: InstanceService) {}

  /** Liveness: 200 while the process serves requests, with the database backend and this instance. */
  @Get('healthz')
  @ApiOkResponse({ type: HealthResponseDto })
  healthz(): HealthResponseDto {
    return { ok: true, backend: this.instance.backend, instance: this.instance.id };
  }
}
