import { Body, Controller, Delete, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiProperty, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Caller } from '../pages/caller-policy';
import { JobView } from '../batch/views';
import { CreateMonitorDto } from '../commands';
import { MonitorService } from '../monitors/monitor.service';
import { MonitorView } from '../monitors/monitor-views';
import { ApiErrors } from './api-errors.decorator';
import { AuthGuard } from './auth.guard';
import { BodyLimit, JOB_BODY } from './body-limit';
import { CurrentCaller } from './caller.decorator';

class MonitorListDto {
  @ApiProperty({ type: MonitorView, isArray: true }) monitors: MonitorView[];
}

class MonitorRunsDto {
  @ApiProperty({
    type: JobView,
    isArray: true,
    description:
      'Its last 100 runs, newest first: jobs of kind monitor_run, read whole through /v1/batch/{id}.',
  })
  runs: JobView[];
}

class MonitorDeletedDto {
  @ApiProperty() deleted: boolean;
}

/**
 * Monitors: a list of pages or a crawl, read again on a schedule (a cron expression or every_s).
 * Each run is a job of kind monitor_run whose pages are compared with the run before ("changes");
 * a page that changed or went gives page.changed / page.removed, and monitor.run.done ends the
 * run, as events and to the monitor's webhook. Only their owner sees them.
 */
@ApiTags('monitors')
@ApiBearerAuth()
@Controller('v1/monitors')
@UseGuards(AuthGuard)
export class MonitorsController {
  constructor(private readonly monitors: MonitorService) {}

  @BodyLimit(JOB_BODY)
  @Post()
  @HttpCode(201)
  @ApiResponse({ status: 201, type: MonitorView })
  @ApiErrors(400, 401, 403, 404, 413, 415, 429)
  createMonitor(@CurrentCaller() caller: Caller, @Body() body: CreateMonitorDto): Promise<MonitorView> {
    return this.monitors.create(caller, body);
  }

  @Get()
  @ApiOkResponse({ type: MonitorListDto })
  @ApiErrors(401)
  async listMonitors(@CurrentCaller() caller: Caller): Promise<MonitorListDto> {
    return { monitors: await this.monitors.list(caller) };
  }

  @Get(':id')
  @ApiOkResponse({ type: MonitorView })
  @ApiErrors(401, 404)
  viewMonitor(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<MonitorView> {
    return this.monitors.get(caller, id);
  }

  @Get(':id/runs')
  @ApiOkResponse({ type: MonitorRunsDto })
  @ApiErrors(401, 404)
  async monitorRuns(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<MonitorRunsDto> {
    return { runs: await this.monitors.runs(caller, id) };
  }

  /** No run starts until it is resumed (a run under way goes on). */
  @Post(':id/pause')
  @HttpCode(200)
  @ApiOkResponse({ type: MonitorView })
  @ApiErrors(401, 404)
  pauseMonitor(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<MonitorView> {
    return this.monitors.pause(caller, id);
  }

  /** Runs again from its next slot (those passed while paused are not run). */
  @Post(':id/resume')
  @HttpCode(200)
  @ApiOkResponse({ type: MonitorView })
  @ApiErrors(401, 404)
  resumeMonitor(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<MonitorView> {
    return this.monitors.resume(caller, id);
  }

  /** Deletes it; its runs stay as jobs until they are swept. */
  @Delete(':id')
  @ApiOkResponse({ type: MonitorDeletedDto })
  @ApiErrors(401, 404)
  async deleteMonitor(@CurrentCaller() caller: Caller, @Param('id') id: string): Promise<MonitorDeletedDto> {
    await this.monitors.remove(caller, id);
    return { deleted: true };
  }
}
