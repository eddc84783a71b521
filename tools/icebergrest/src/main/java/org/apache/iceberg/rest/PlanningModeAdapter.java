package org.apache.iceberg.rest;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.stream.Collectors;
import org.apache.iceberg.FileScanTask;
import org.apache.iceberg.Scan;
import org.apache.iceberg.catalog.Catalog;
import org.apache.iceberg.rest.responses.ConfigResponse;

/**
 * PlanningModeAdapter is Iceberg's RESTCatalogAdapter with server-side scan
 * planning switched on (synchronous or asynchronous, with a chosen number of
 * file scan tasks per plan task) or off (no plan endpoint advertised in
 * /v1/config, and plan requests refused). It lives in Iceberg's package
 * because Route, the type of every request it sees, is package-private.
 */
public final class PlanningModeAdapter extends RESTCatalogAdapter {
  /** The REST spec's scan planning endpoints. */
  private static final Set<Endpoint> PLANNING =
      Set.of(
          Endpoint.V1_SUBMIT_TABLE_SCAN_PLAN,
          Endpoint.V1_FETCH_TABLE_SCAN_PLAN,
          Endpoint.V1_CANCEL_TABLE_SCAN_PLAN,
          Endpoint.V1_FETCH_TABLE_SCAN_PLAN_TASKS);

  private static final Set<Route> PLANNING_ROUTES =
      Set.of(
          Route.PLAN_TABLE_SCAN,
          Route.FETCH_PLANNING_RESULT,
          Route.FETCH_SCAN_TASKS,
          Route.CANCEL_PLAN_TABLE_SCAN);

  private final boolean plans;

  public PlanningModeAdapter(Catalog catalog, boolean plans, boolean async, int tasksPerPlanTask) {
    super(catalog);
    this.plans = plans;
    setPlanningBehavior(
        new PlanningBehavior() {
          @Override
          public int numberFileScanTasksPerPlanTask() {
            return tasksPerPlanTask;
          }

          @Override
          public boolean shouldPlanTableScanAsync(Scan<?, FileScanTask, ?> scan) {
            return async;
          }
        });
  }

  @Override
  public <T extends RESTResponse> T handleRequest(
      Route route,
      Map<String, String> vars,
      HTTPRequest request,
      Class<T> responseType,
      Consumer<Map<String, String>> responseHeaders) {
    if (!plans && PLANNING_ROUTES.contains(route)) {
      throw new UnsupportedOperationException("this server does not plan scans");
    }
    T response = super.handleRequest(route, vars, request, responseType, responseHeaders);
    if (plans || route != Route.CONFIG) {
      return response;
    }
    ConfigResponse config = (ConfigResponse) response;
    List<Endpoint> endpoints =
        config.endpoints().stream().filter(e -> !PLANNING.contains(e)).collect(Collectors.toList());
    return castResponse(
        responseType,
        ConfigResponse.builder()
            .withDefaults(config.defaults())
            .withOverrides(config.overrides())
            .withEndpoints(endpoints)
            .build());
  }
}
