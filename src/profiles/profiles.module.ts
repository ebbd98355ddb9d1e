import { Module } from '@nestjs/common';
import { DcacheModule } from '../dcache/dcache.module';
import { ProfileService } from './profile.service';

@Module({ imports: [DcacheModule], providers: [ProfileService], exports: [ProfileService] })
export class ProfilesModule {}
