import { Module } from '@nestjs/common';
import { DcacheModule } from '../dcache/dcache.module';

@Module({
  imports: [DcacheModule],
})
export class BatchModule {}
