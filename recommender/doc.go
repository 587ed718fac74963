// Package recommender will hold hvpa's own implementation of the VPA usage model as pure code: decaying
// histograms, per-interval memory peaks, OOM bump-up, estimators and the checkpoint codec (issue 4), with
// metrics sources behind small interfaces in recommender/metrics (issue 5). Nothing is implemented here yet.
package recommender
