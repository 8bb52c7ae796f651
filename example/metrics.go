package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
)

// metricsServer serves adkctx's metrics for Prometheus to scrape: the OpenTelemetry SDK's meter
// provider with the Prometheus exporter as its reader, on its own registry (no process or Go
// runtime series), over HTTP.
type metricsServer struct {
	Provider *sdkmetric.MeterProvider
	URL      string // the scrape URL
	srv      *http.Server
	done     chan error
}

// serviceName is the example's service.name (its metrics' target_info and job): the SDK would
// otherwise report "unknown_service:<binary>". OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES
// override it.
const serviceName = "adkctx-example"

// serveMetrics listens on addr (host:port; port 0 picks one) and serves /metrics.
func serveMetrics(addr string) (*metricsServer, error) {
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		return nil, fmt.Errorf("prometheus exporter: %w", err)
	}
	res, err := resource.New(context.Background(), resource.WithTelemetrySDK(),
		resource.WithAttributes(semconv.ServiceName(serviceName)), resource.WithFromEnv())
	if err != nil {
		return nil, fmt.Errorf("metrics resource: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, usagef("-metrics-addr %s: %v", addr, oneLine(err))
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	m := &metricsServer{
		Provider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp), sdkmetric.WithResource(res)),
		URL:      "http://" + ln.Addr().String() + "/metrics",
		srv:      &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		done:     make(chan error, 1),
	}
	go func() { m.done <- m.srv.Serve(ln) }()
	return m, nil
}

// Close stops the server and the meter provider.
func (m *metricsServer) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := m.srv.Shutdown(ctx)
	if serveErr := <-m.done; !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	return errors.Join(err, m.Provider.Shutdown(ctx))
}
