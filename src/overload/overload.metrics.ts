import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram } from 'prom-client';
import { MetricsService } from '../observability/metrics.service.js';
import { AdmissionController } from './admission.js';
import { REJECT_REASONS, type RejectReason, WORK_CLASSES, type WorkClass } from './work-class.js';

/** Seconds a request waited for admission: most wait nothing, the queue's bound is 0.1 s. */
const WAIT_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25];

/**
 * Admission's metrics: requests turned away by transport, class and reason, and the limit, the
 * work in flight, the queue and its wait, read from the controller when scraped. Rejections are
 * counted through children made once, so a rejection costs no label lookup.
 */
@Injectable()
export class OverloadMetrics {
  private readonly rejections = new Map<string, { inc(): void }>();
  private closedConnections: () => number = () => 0;

  constructor(metrics: MetricsService, admission: AdmissionController) {
    const registers = [metrics.registry];
    const rejected = new Counter({
      name: 'overload_rejected_total',
      help: 'Requests and calls turned away before any work, by transport, class and reason',
      labelNames: ['transport', 'class', 'reason'] as const,
      registers,
    });
    for (const transport of ['http', 'grpc'] as const) {
      for (const workClass of WORK_CLASSES) {
        for (const reason of REJECT_REASONS) {
          const child = rejected.labels({ transport, class: workClass, reason });
          // Every series exists from the start, so rate() sees the first rejection.
          child.inc(0);
          this.rejections.set(`${transport}/${workClass}/${reason}`, child);
        }
      }
    }
    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers,
        collect() {
          this.set(read());
        },
      });
    gauge('overload_limit', 'The adaptive concurrency limit', () => admission.stats.limit);
    gauge(
      'overload_in_flight',
      'Admitted requests and calls in flight, long polls and watches apart',
      () => admission.stats.inFlight,
    );
    gauge(
      'overload_feed_in_flight',
      'Change-feed long polls and watch streams in flight',
      () => admission.stats.feedInFlight,
    );
    gauge(
      'overload_queued',
      'Requests and calls waiting for admission',
      () => admission.stats.queued,
    );
    const wait = new Histogram({
      name: 'overload_queue_wait_seconds',
      help: 'How long admitted requests and calls waited for admission',
      buckets: WAIT_BUCKETS,
      registers,
    });
    admission.onWait = (waitedMs) => wait.observe(waitedMs / 1000);
    const read = () => this.closedConnections();
    new Counter({
      name: 'overload_idle_connections_closed_total',
      help: 'Idle HTTP connections closed because the open connections passed their bound',
      registers,
      collect() {
        this.reset();
        this.inc(read());
      },
    });
  }

  /** The HTTP server's count of idle connections it closed (boundIdleConnections). */
  readClosedConnectionsFrom(read: () => number): void {
    this.closedConnections = read;
  }

  rejected(transport: 'http' | 'grpc', workClass: WorkClass, reason: RejectReason): void {
    this.rejections.get(`${transport}/${workClass}/${reason}`)!.inc();
  }
}
