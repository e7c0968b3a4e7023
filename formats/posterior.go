package formats

// Schema names of the fit stage's outputs.
const (
	SchemaMap         = "pwe.map/1"
	SchemaDraws       = "pwe.draws/1"
	SchemaDrawsLong   = "pwe.draws_long/1"
	SchemaSampleStats = "pwe.sample_stats/1"
	SchemaSummary     = "pwe.summary/1"
)

// Parameter names in the param column.
const (
	ParamRho   = "rho"   // target vectors
	ParamAlpha = "alpha" // context vectors
)

// VectorRow is one vector of a point estimate (map.parquet, truth.parquet,
// exported posterior means).
type VectorRow struct {
	Param   string    `parquet:"param,dict"`
	TokenID int32     `parquet:"token_id"`
	Token   string    `parquet:"token"`
	Vector  []float32 `parquet:"vector,list"`
	Anchor  bool      `parquet:"anchor"`
}

// DrawRow is one vector of one posterior draw (draws.parquet), so that
// DuckDB's list functions (list_cosine_similarity, list_dot_product) apply
// to the vector column directly.
type DrawRow struct {
	Chain   int16     `parquet:"chain"`
	Draw    int32     `parquet:"draw"`
	Param   string    `parquet:"param,dict"`
	TokenID int32     `parquet:"token_id"`
	Token   string    `parquet:"token,dict"`
	Vector  []float32 `parquet:"vector,list"`
}

// DrawLongRow is one coordinate of one draw (--draws-layout long).
type DrawLongRow struct {
	Chain   int16   `parquet:"chain"`
	Draw    int32   `parquet:"draw"`
	Param   string  `parquet:"param,dict"`
	TokenID int32   `parquet:"token_id"`
	Token   string  `parquet:"token,dict"`
	Dim     int16   `parquet:"dim"`
	Value   float32 `parquet:"value"`
}

// SampleStatsRow holds per-draw sampler statistics (sample_stats.parquet).
type SampleStatsRow struct {
	Chain        int16   `parquet:"chain"`
	Draw         int32   `parquet:"draw"`
	LogPosterior float64 `parquet:"log_posterior"`
	LogLik       float64 `parquet:"log_lik"`
	Seconds      float64 `parquet:"seconds"`
	// GroupAccept is the acceptance rate of the frame-change moves since
	// the chain's previous draw (NaN when they are off).
	GroupAccept float64 `parquet:"group_accept"`
}

// Stats are the summary statistic columns, named as R's posterior package
// names them; R-hat and ESS are the rank-normalised split versions.
type Stats struct {
	Mean     float64 `parquet:"mean"`
	Median   float64 `parquet:"median"`
	SD       float64 `parquet:"sd"`
	MAD      float64 `parquet:"mad"`
	Q5       float64 `parquet:"q5"`
	Q95      float64 `parquet:"q95"`
	MCSEMean float64 `parquet:"mcse_mean"`
	ESSBulk  float64 `parquet:"ess_bulk"`
	ESSTail  float64 `parquet:"ess_tail"`
	Rhat     float64 `parquet:"rhat"`
}

// SummaryRow summarises the draws of one free coordinate (summary.parquet).
type SummaryRow struct {
	Param   string `parquet:"param,dict"`
	TokenID int32  `parquet:"token_id"`
	Token   string `parquet:"token"`
	Dim     int16  `parquet:"dim"`
	Stats
}
