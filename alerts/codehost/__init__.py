"""Posting pre-merge checks to code hosts (GitHub): a commit status and a sticky pull-request comment."""
