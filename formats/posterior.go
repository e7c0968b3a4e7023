package formats

// Schema names of the fit stage's outputs.
const (
	SchemaMap         = "pwe.map/1"
	SchemaDraws       = "pwe.draws/1"
	SchemaDrawsLong   = "pwe.draws_long/1"
	SchemaSampleStats = "pwe.sample_stats/1"
	SchemaSummary     = "pwe.summary/1"
	SchemaSimilarity  = "pwe.similarity/1"
	SchemaNeighbours  = "pwe.neighbours/1"
	SchemaEvaluation  = "pwe.evaluation/1"
)

// Quantity names in similarity.parquet's quantity column.
const (
	QuantityCosine       = "cosine"            // cosine similarity of the chosen vectors
	QuantityDot          = "dot"               // dot product of the chosen vectors
	QuantityCooccurrence = "cooccurrence_prob" // sigmoid(rho_a . alpha_b)
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

// SimilarityRow summarises the draws of one derived quantity of a token
// pair (similarity.parquet). Cosine and dot are symmetric; the
// co-occurrence probability is that of token_b in token_a's context.
type SimilarityRow struct {
	TokenA   string `parquet:"token_a"`
	TokenB   string `parquet:"token_b"`
	Quantity string `parquet:"quantity,dict"`
	Stats
}

// NeighbourRow is one candidate neighbour of one query token
// (neighbours.parquet): every token that is among the query's Top nearest
// by cosine similarity in at least one draw, with the posterior of its rank
// (1 = nearest; the query itself is not ranked) and of its similarity.
type NeighbourRow struct {
	Query       string `parquet:"query"`
	QueryID     int32  `parquet:"query_id"`
	Neighbour   string `parquet:"neighbour"`
	NeighbourID int32  `parquet:"neighbour_id"`
	// Top is K; PTop the fraction of draws in which the neighbour is among
	// the K nearest, PTopMCSE its Monte Carlo standard error (0 when the
	// indicator is the same in every draw).
	Top      int32   `parquet:"top"`
	PTop     float64 `parquet:"p_top"`
	PTopMCSE float64 `parquet:"p_top_mcse"`
	// Rank quantiles (type 7, so a median can be a half-integer).
	RankMedian float64 `parquet:"rank_median"`
	RankQ5     float64 `parquet:"rank_q5"`
	RankQ95    float64 `parquet:"rank_q95"`
	// Cosine similarity: posterior mean, median, 90% interval and the
	// convergence diagnostics of its draws.
	SimMean    float64 `parquet:"similarity_mean"`
	SimMedian  float64 `parquet:"similarity_median"`
	SimQ5      float64 `parquet:"similarity_q5"`
	SimQ95     float64 `parquet:"similarity_q95"`
	SimRhat    float64 `parquet:"similarity_rhat"`
	SimESSBulk float64 `parquet:"similarity_ess_bulk"`
}

// EvaluationRow is one figure of evaluation.parquet (see posterior.Metric).
type EvaluationRow struct {
	Metric    string  `parquet:"metric,dict"`
	Estimator string  `parquet:"estimator,dict"`
	Value     float64 `parquet:"value"`
	// N is what Value averages over: V^2 pairs, or held-out observations.
	N float64 `parquet:"n"`
	// Draws is the number of posterior draws behind Value (0 for the MAP).
	Draws int64 `parquet:"draws"`
}
