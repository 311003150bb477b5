"""The dashboard's views, one module each: a view draws itself from a :class:`~rpa_sim.tui.state.DashboardState`
(the model, τ, the selected policy and α) and never reads the app."""
